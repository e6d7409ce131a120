//! The object model: the local objects of Ice's API and the services they
//! use to reach each other.
//!
//! - [`communicator`]: the [`Communicator`](communicator::Communicator),
//!   the root every other object comes from (its properties, connections,
//!   adapters, locators and routers);
//! - [`proxy`]: the [`Proxy`](proxy::Proxy) and its invocations;
//! - [`object_adapter`]: the [`ObjectAdapter`](object_adapter::ObjectAdapter),
//!   with the [`servant`] and [`current`] of a dispatch;
//! - [`locator`] and [`router`]: how a proxy without usable endpoints finds
//!   its connection, and how an adapter registers itself.
//!
//! These types refer to one another as Ice's API has them do: a
//! communicator makes proxies and adapters, and each hands back its
//! communicator; a proxy's locator and router are proxies; a `Current`
//! names its adapter, whose servants take a `Current`. Their modules
//! therefore import one another, and this module holds them together.
//! Nothing below it imports it: the connection layer (`connection`,
//! `transport`) reaches the adapter only through its `Dispatcher` seam.
//!
//! Each module is re-exported at the crate root (`floe_runtime::proxy`,
//! …), the paths applications use.

pub mod communicator;
pub mod current;
pub mod locator;
pub mod object_adapter;
pub mod proxy;
pub mod router;
pub mod servant;
