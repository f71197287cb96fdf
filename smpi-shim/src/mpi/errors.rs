//! MPI error classes and the error type every MPI-layer function returns.

pub(crate) const MPI_SUCCESS: i32 = 0;
pub(crate) const MPI_ERR_BUFFER: i32 = 1;
pub(crate) const MPI_ERR_COUNT: i32 = 2;
pub(crate) const MPI_ERR_TYPE: i32 = 3;
pub(crate) const MPI_ERR_TAG: i32 = 4;
pub(crate) const MPI_ERR_COMM: i32 = 5;
pub(crate) const MPI_ERR_RANK: i32 = 6;
pub(crate) const MPI_ERR_REQUEST: i32 = 7;
pub(crate) const MPI_ERR_ROOT: i32 = 8;
pub(crate) const MPI_ERR_GROUP: i32 = 9;
pub(crate) const MPI_ERR_OP: i32 = 10;
pub(crate) const MPI_ERR_ARG: i32 = 13;
pub(crate) const MPI_ERR_TRUNCATE: i32 = 15;
pub(crate) const MPI_ERR_OTHER: i32 = 16;
pub(crate) const MPI_ERR_INTERN: i32 = 17;
pub(crate) const MPI_ERR_IN_STATUS: i32 = 18;
pub(crate) const MPI_ERR_PENDING: i32 = 19;
pub(crate) const MPI_ERR_KEYVAL: i32 = 20;
pub(crate) const MPI_ERRORS_ARE_FATAL: i32 = 1;
pub(crate) const MPI_ERRORS_RETURN: i32 = 2;

/// `MPI_ERR_LASTCODE`: the last predefined error code.
pub(crate) const MPI_ERR_LASTCODE: i32 = 64;

/// One rank's error classes and codes added by the program
/// (`MPI_Add_error_class`, `MPI_Add_error_code`, `MPI_Add_error_string`).
/// Per rank because each MPI process numbers its own.
#[derive(Debug)]
pub(crate) struct UserErrors {
    /// `MPI_LASTUSEDCODE`, boxed: the attribute's value is a pointer to it.
    pub last_used: Box<i32>,
    /// The class of each added class (itself) and code.
    pub class_of: std::collections::BTreeMap<i32, i32>,
    pub strings: std::collections::BTreeMap<i32, String>,
}

impl Default for UserErrors {
    fn default() -> Self {
        UserErrors {
            last_used: Box::new(MPI_ERR_LASTCODE),
            class_of: Default::default(),
            strings: Default::default(),
        }
    }
}

impl UserErrors {
    /// A new error class (`class` = `None`) or a new code of `class`.
    pub(crate) fn add(&mut self, class: Option<i32>) -> MpiResult<i32> {
        if let Some(c) = class {
            if !(0..=MPI_ERR_LASTCODE).contains(&c) && self.class_of.get(&c) != Some(&c) {
                return Err(mpi_err(MPI_ERR_ARG, format!("{c} is not an error class")));
            }
        }
        *self.last_used += 1;
        let code = *self.last_used;
        self.class_of.insert(code, class.unwrap_or(code));
        Ok(code)
    }

    /// The class of `code`; `None` for a code that does not exist.
    pub(crate) fn class(&self, code: i32) -> Option<i32> {
        if (0..=MPI_ERR_LASTCODE).contains(&code) {
            Some(code)
        } else {
            self.class_of.get(&code).copied()
        }
    }
}

/// An MPI error: class and a readable explanation.
#[derive(Debug, Clone)]
pub(crate) struct MpiError {
    pub code: i32,
    pub message: String,
}

pub(crate) type MpiResult<T> = Result<T, MpiError>;

pub(crate) fn mpi_err(code: i32, message: impl Into<String>) -> MpiError {
    MpiError {
        code,
        message: message.into(),
    }
}

/// The text of an error class (`MPI_Error_string`).
pub(crate) fn error_string(code: i32) -> &'static str {
    match code {
        MPI_SUCCESS => "MPI_SUCCESS: no error",
        MPI_ERR_BUFFER => "MPI_ERR_BUFFER: invalid buffer pointer",
        MPI_ERR_COUNT => "MPI_ERR_COUNT: invalid count argument",
        MPI_ERR_TYPE => "MPI_ERR_TYPE: invalid datatype",
        MPI_ERR_TAG => "MPI_ERR_TAG: invalid tag",
        MPI_ERR_COMM => "MPI_ERR_COMM: invalid communicator",
        MPI_ERR_RANK => "MPI_ERR_RANK: invalid rank",
        MPI_ERR_REQUEST => "MPI_ERR_REQUEST: invalid request",
        MPI_ERR_ROOT => "MPI_ERR_ROOT: invalid root",
        MPI_ERR_GROUP => "MPI_ERR_GROUP: invalid group",
        MPI_ERR_OP => "MPI_ERR_OP: invalid reduce operation",
        11 => "MPI_ERR_TOPOLOGY: invalid communicator topology",
        12 => "MPI_ERR_DIMS: invalid dimension argument",
        MPI_ERR_ARG => "MPI_ERR_ARG: invalid argument",
        14 => "MPI_ERR_UNKNOWN: unknown error",
        MPI_ERR_TRUNCATE => "MPI_ERR_TRUNCATE: message truncated",
        MPI_ERR_OTHER => "MPI_ERR_OTHER: other error",
        MPI_ERR_INTERN => "MPI_ERR_INTERN: internal error",
        MPI_ERR_IN_STATUS => "MPI_ERR_IN_STATUS: error code in status",
        MPI_ERR_PENDING => "MPI_ERR_PENDING: pending request",
        MPI_ERR_KEYVAL => "MPI_ERR_KEYVAL: invalid key value",
        21 => "MPI_ERR_NO_MEM: out of memory",
        22 => "MPI_ERR_INFO: invalid info object",
        23 => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        24 => "MPI_ERR_INFO_KEY: invalid info key",
        25 => "MPI_ERR_INFO_VALUE: invalid info value",
        26 => "MPI_ERR_INFO_NOKEY: info key not found",
        27 => "MPI_ERR_WIN: invalid window",
        28 => "MPI_ERR_BASE: invalid base address",
        29 => "MPI_ERR_SIZE: invalid size",
        30 => "MPI_ERR_DISP: invalid displacement",
        31 => "MPI_ERR_LOCKTYPE: invalid lock type",
        32 => "MPI_ERR_ASSERT: invalid assertion",
        33 => "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
        34 => "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
        35 => "MPI_ERR_RMA_RANGE: target memory is not part of the window",
        36 => "MPI_ERR_RMA_ATTACH: memory cannot be attached",
        37 => "MPI_ERR_RMA_SHARED: memory cannot be shared",
        38 => "MPI_ERR_RMA_FLAVOR: wrong window flavor",
        _ => crate::mpi::io::error_string(code).unwrap_or("unknown error code"),
    }
}
