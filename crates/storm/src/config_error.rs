//! [`ConfigError`]: what reading the broker's properties can fail with
//! (the broker's and the replicas' settings alike; `crate::config`
//! re-exports it).

use std::path::PathBuf;

/// Errors while reading properties.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A configuration file could not be read.
    #[error("cannot read configuration file {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A property has a value of the wrong form.
    #[error("invalid value `{value}` for property {key}")]
    BadValue {
        /// The property.
        key: String,
        /// Its value.
        value: String,
    },
}
