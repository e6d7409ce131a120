//! floe-runtime: Communicator, ObjectAdapter, proxies and connections on tokio.
#![warn(missing_docs)]
