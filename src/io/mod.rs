//! File formats and generators of the original programs, byte for byte.
//!
//! Readers never size an allocation from a count the file cannot hold and report path, line and
//! column on malformed input; writers produce the originals' exact bytes.

pub mod batch_files;
pub mod cache;
pub mod case;
pub mod changegen;
pub mod csr_text;
pub mod dimacs;
pub mod mtx;
pub mod outputs;
pub mod rng;
pub mod timing;
pub mod trees;
pub mod graphgen;

/// A graph as the text formats hold it: CSR arrays with edge-major weights (`weights[e*k + j]`).
/// `k` is 0 when the Values file is empty (the caller then supplies K).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsrText {
    pub n: usize,
    pub k: usize,
    pub row_ptr: Vec<i32>,
    pub col_ind: Vec<i32>,
    pub weights: Vec<i32>,
}
