//! Gives the shared library its SONAME: the major number is the ABI version
//! (`PROBER_ABI_VERSION`), bumped only when the ABI breaks.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libprober.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
