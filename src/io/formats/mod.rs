//! The file formats: CSR text triplets, Matrix Market, DIMACS, change batch directories, tree
//! files and the binary graph cache.

pub mod batch_files;
pub mod cache;
pub mod csr_text;
pub mod dimacs;
pub mod mtx;
pub mod trees;
