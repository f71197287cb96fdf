//! `smpirun`: runs an MPI program built with `smpicc` on a simulated platform.
//! See `smpirun --help`. The MPI functions the program calls are the
//! library's (`smpi_shim::abi`), exported from this executable.

#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = smpi_shim::launcher::main_with_args(&args);
    std::process::exit(code);
}
