//! The workspace's source layout rules, read from the sources themselves so that a change
//! breaking one fails a test, not a review: no import circle between files (`modules`: who
//! uses whom, resolved through re-exports) and no function over 150 lines (`functions`),
//! tests included. Text-level reading (`lex`), enough of Rust for these two rules.

pub mod functions;
pub mod lex;
pub mod modules;
pub mod workspace;
