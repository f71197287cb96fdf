//! `smpirun`: runs an MPI program built with `smpicc` on a simulated platform.
//! See `smpirun --help`.

mod abi;
mod abi_dtype;
mod abi_info;
mod abi_more;
mod abi_nbc;
mod abi_p2p;
mod abi_topo;
mod blas_abi;
mod helpers_abi;
mod libc_abi;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = smpi_shim::launcher::main_with_args(&args);
    std::process::exit(code);
}
