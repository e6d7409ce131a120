//! The floe server of the conformance suite: servants for the dispatchers
//! generated from `ServerOnly.ice` and `Conformance.ice` (the server's
//! view), doing what `peers/server.py` and `peers/server.cpp` do.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use floe::codegen::{ClassRef, Current, DispatchError, UserException, ValuePtr};
use floe::runtime::{Communicator, Properties};
use floe::Identity;
use floe_conformance::server_gen::conf::*;

use super::Ports;

mod api;
mod exceptions;
mod objects;
mod ops;
mod sliced;

use exceptions::*;
use objects::*;
use ops::*;
use sliced::*;

pub(super) type Res<T> = Result<T, DispatchError>;
pub(super) type UserRes = Res<()>;
pub(super) type Shared<T> = Option<ClassRef<T>>;

pub(super) fn reversed<T: Clone>(v: &[T]) -> Vec<T> {
    v.iter().rev().cloned().collect()
}

pub(super) fn merged<K: Ord + Clone, V: Clone>(
    p1: &BTreeMap<K, V>,
    p2: BTreeMap<K, V>,
) -> BTreeMap<K, V> {
    let mut out = p1.clone();
    out.extend(p2);
    out
}

/// A floe server of every interface on two communicators, as the Python
/// and C++ servers: default properties, and `Ice.AcceptClassCycles=1`.
pub struct FloeServer {
    communicators: Vec<Communicator>,
    /// Its ports.
    pub ports: Ports,
}

/// A communicator serving everything: its main adapter's port and its
/// Facets adapter's.
async fn serve(props: Properties) -> (Communicator, u16, u16) {
    let communicator = Communicator::with_properties(props);
    let adapter = communicator
        .create_object_adapter_with_endpoints("Conf", "tcp -h 127.0.0.1 -p 0")
        .await
        .expect("create the object adapter");
    let id = Identity::from_name;
    let added = [
        adapter.add(
            id("ops"),
            OperationsDispatcher::new(OperationsI {
                last: AtomicI32::new(0),
            }),
        ),
        adapter.add(id("opt"), OptionalsDispatcher::new(OptionalsI)),
        adapter.add(id("obj"), ObjectsDispatcher::new(ObjectsI::default())),
        adapter.add(id("exc"), ExceptionsDispatcher::new(ExceptionsI)),
        adapter.add(
            id("sexc"),
            SlicedExceptionsDispatcher::new(SlicedExceptionsI),
        ),
        adapter.add(id("sobj"), SlicedObjectsDispatcher::new(SlicedObjectsI)),
        adapter.add(id("cobj"), CompactObjectsDispatcher::new(CompactObjectsI)),
        adapter.add(id("relaying"), RelayingDispatcher::new(api::RelayingI)),
        adapter.add(id("vf"), ValuesDispatcher::new(api::ValuesI)),
        adapter.add(id("cls"), LoudGreeterDispatcher::new(api::LoudGreeterI)),
        adapter.add(
            id("obs"),
            ObservedDispatcher::with_builtins(api::ObservedI::default()),
        ),
        adapter.add(
            id("deact"),
            DeactivationDispatcher::new(api::DeactivationI::default()),
        ),
        adapter.add(
            id("optn"),
            OptionalNullsDispatcher::new(api::OptionalNullsI),
        ),
        adapter.add(id("info"), InfoDispatcher::new(api::InfoI)),
    ];
    for a in added {
        a.expect("add a servant");
    }
    api::add_locators(&adapter);
    adapter.activate();
    let facets = communicator
        .create_object_adapter_with_endpoints("Facets", "tcp -h 127.0.0.1 -p 0")
        .await
        .expect("create the Facets adapter");
    api::facets_adapter(&facets);
    facets.activate();
    (
        communicator,
        adapter.endpoints()[0].port,
        facets.endpoints()[0].port,
    )
}

impl FloeServer {
    /// Starts both communicators on free ports of 127.0.0.1.
    pub async fn start() -> FloeServer {
        let (plain, port, facets_port) = serve(Properties::new()).await;
        let props = Properties::new();
        props.set("Ice.AcceptClassCycles", "1");
        let (cycles, cycles_port, _) = serve(props).await;
        FloeServer {
            communicators: vec![plain, cycles],
            ports: Ports {
                port,
                cycles_port,
                facets_port,
            },
        }
    }

    /// Destroys both communicators.
    pub async fn stop(self) {
        for c in self.communicators {
            c.destroy().await;
        }
    }
}
