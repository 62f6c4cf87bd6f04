//! The `hotbench` binary: command-line definition and glue over the library crates.
fn main() {
    println!("hotbench (being written)");
}
