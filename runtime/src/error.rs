//! The runtime's one error type, and the check of a driver call's result every module shares.

use std::fmt;

use cudarc::driver::sys;

#[derive(Clone, Debug)]
pub struct RuntimeError {
    pub message: String,
}

impl RuntimeError {
    pub(crate) fn new(message: impl Into<String>) -> RuntimeError {
        RuntimeError { message: message.into() }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuntimeError {}

impl From<cudarc::driver::DriverError> for RuntimeError {
    fn from(e: cudarc::driver::DriverError) -> RuntimeError {
        RuntimeError::new(format!("CUDA driver: {e:?}"))
    }
}

pub(crate) fn check(r: sys::CUresult, what: &str) -> Result<(), RuntimeError> {
    if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(RuntimeError::new(format!("{what}: {r:?}"))) }
}
