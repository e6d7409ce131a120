//! # floe
//!
//! Ice-compatible async RPC for Rust: Ice protocol 1.0 and encoding 1.1,
//! byte for byte, on tokio.
//!
//! This facade re-exports the crates of the workspace:
//!
//! - [`wire`]: the encoding and protocol, without I/O (`floe-wire`).
//! - [`runtime`]: communicator, object adapters, proxies and connections (`floe-runtime`).
//! - [`slice!`]: Slice compiled at macro-expansion time into typed proxies,
//!   servant traits, dispatchers and data types; the same code `slice2rs`
//!   and `floe_idl::Builder` (for `build.rs`) write. Generated code reaches
//!   floe only through [`codegen`].
//!
//! ```no_run
//! use floe::codegen::{Current, DispatchError};
//!
//! floe::slice!("crates/idl/tests/codegen/Hello.ice"); // module Demo { interface Hello .. }
//!
//! struct Greeter;
//!
//! impl demo::Hello for Greeter {
//!     async fn say_hello(&self, delay: i32, _: &Current) -> Result<String, DispatchError> {
//!         Ok(format!("hello after {delay} ms"))
//!     }
//!     async fn ping(&self, _: &Current) -> Result<(), DispatchError> {
//!         Ok(())
//!     }
//! }
//!
//! # async fn run() -> Result<(), floe::runtime::Error> {
//! let communicator = floe::runtime::Communicator::new();
//! let adapter = communicator
//!     .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
//!     .await?;
//! let proxy = adapter.add(
//!     floe::Identity::from_name("hello"),
//!     demo::HelloDispatcher::new(Greeter),
//! )?;
//! adapter.activate();
//! let hello = demo::HelloPrx::checked_cast(proxy).await?.expect("a Hello");
//! let greeting: String = hello.say_hello(5).await?;
//! # Ok(()) }
//! ```
//!
//! ## User exceptions
//!
//! A servant raises a user exception with `Err(e.into())` (or `?`); the
//! caller gets [`runtime::Error::UserException`] and views it as the type
//! it expects with [`runtime::Error::user_exception`]:
//!
//! ```
//! use floe::runtime::{Communicator, Current, DispatchError};
//!
//! #[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
//! #[floe(module = "Demo")]
//! pub struct Busy {
//!     pub retry_ms: i32,
//! }
//!
//! #[floe::interface(module = "Demo")]
//! pub trait Hello {
//!     async fn say_hello(&self, name: String) -> Result<String, Busy>; // throws Demo::Busy
//! }
//!
//! struct Greeter;
//!
//! impl Hello for Greeter {
//!     async fn say_hello(&self, name: String, _: &Current) -> Result<String, DispatchError> {
//!         if name.is_empty() {
//!             return Err(Busy { retry_ms: 10 }.into());
//!         }
//!         Ok(format!("Hello, {name}!"))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), floe::runtime::Error> {
//! let communicator = Communicator::new();
//! let adapter = communicator
//!     .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
//!     .await?;
//! let proxy = adapter.add(floe::Identity::from_name("hello"), HelloDispatcher::new(Greeter))?;
//! adapter.activate();
//! let hello = HelloPrx::unchecked_cast(proxy);
//!
//! assert_eq!(hello.say_hello("ann").await?, "Hello, ann!");
//! match hello.say_hello("").await {
//!     Ok(greeting) => println!("{greeting}"),
//!     Err(e) => match e.user_exception::<Busy>() {
//!         Some(busy) => assert_eq!(busy.retry_ms, 10),
//!         None => return Err(e),
//!     },
//! }
//! communicator.destroy().await;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod codegen;
mod proxy_arg;
mod slice_export;

pub use floe_runtime as runtime;
pub use floe_wire as wire;

pub use floe_derive::slice;
pub use floe_wire::{CompactString, Decode, Decoder, Encode, Encoder, Identity};

#[doc(hidden)]
pub use floe_derive::__interface_inherit;
pub use floe_derive::{interface, Class, Enum, Exception, Struct};
pub use slice_export::{slice_of, SliceParts, SliceType};
