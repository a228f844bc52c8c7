//! Compiles the small C helper behind `engine::numeric` (long double math and
//! glibc-exact float parsing/formatting, which Rust cannot express directly).
fn main() {
    println!("cargo:rerun-if-changed=csrc/longdouble.c");
    cc::Build::new().file("csrc/longdouble.c").warnings(true).compile("volley_numeric");
}
