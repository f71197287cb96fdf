//! Exports the executable's symbols (the MPI functions) to the programs it loads.
fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic");
    println!("cargo:rerun-if-changed=build.rs");
}
