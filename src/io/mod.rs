//! File formats and generators of the original programs, byte for byte.
//!
//! Readers never size an allocation from a count the file cannot hold and report path, line and
//! column on malformed input; writers produce the originals' exact bytes.

pub mod batch_files;
pub mod changegen;
pub mod csr_text;
pub mod dimacs;
pub mod mtx;
pub mod rng;
pub mod timing;
pub mod trees;
