//! What the drop-in driver reads and writes around a run: a MOSP case's inputs, the output
//! folder and the timing CSV.

pub mod case;
pub mod outputs;
pub mod timing;
