//! The code generated from `slice/Hello.ice` (module `Demo`: the typed
//! proxy `demo::HelloPrx`, the servant trait `demo::Hello` and its
//! dispatcher `demo::HelloDispatcher`), shared by the `server` and `client`
//! binaries.

include!(concat!(env!("OUT_DIR"), "/Hello.rs"));
