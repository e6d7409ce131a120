//! `slice/IceStorm.ice` (floe-storm's own Slice) is wire-equivalent to the
//! IceStorm 3.7 Slice installed by Debian Ice: same type ids, operations,
//! parameters (types expanded to their wire shape), modes (including the
//! `nonmutating` wire mode), return types, exceptions and their members.
//! Its broker-to-broker part (not in the installed Slice) is checked
//! against the wire facts of §8.5; what Ice 3.8 added (`createOrRetrieve`)
//! is checked against Ice 3.8's Slice in `tests/ice38.rs`.

mod slice_contract;

use std::path::Path;

use floe_idl::model::Model;
use slice_contract::{compile, contract, without_ice38_additions};

/// The broker-to-broker definitions, which the installed Slice lacks.
const INTERNAL: [&str; 5] = [
    "::IceStorm::EventData",
    "::IceStorm::EventDataSeq",
    "::IceStorm::TopicInternal",
    "::IceStorm::TopicLink",
    "::IceStorm::TopicManagerInternal",
];

fn ours() -> Model {
    compile(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("slice/IceStorm.ice"),
        None,
    )
}

#[test]
fn own_slice_compiles_without_system_slice() {
    let c = contract(&ours());
    assert!(c["::IceStorm::Topic"].contains("getLinkInfoSeq"), "{c:#?}");
    assert_eq!(c.len(), 14 + INTERNAL.len(), "{c:#?}");
}

#[test]
fn internal_interfaces_match_the_wire_facts() {
    let c = contract(&ours());
    // §8.5: forward(EventDataSeq), mode 0; EventData members in wire order.
    assert_eq!(
        c["::IceStorm::EventData"],
        "struct{String op; enum ::Ice::OperationMode mode; sequence<Byte> data; \
         dictionary<String, String> context}"
    );
    assert_eq!(
        c["::IceStorm::TopicLink"],
        "ids [\"::Ice::Object\", \"::IceStorm::TopicLink\"]\n\
         Normal void forward(sequence<struct{String op; enum ::Ice::OperationMode mode; \
         sequence<Byte> data; dictionary<String, String> context}> events tag=None) throws []"
    );
    // The type ids IceStorm's topics and topic manager announce (ice_ids).
    assert!(c["::IceStorm::TopicInternal"].starts_with(
        "ids [\"::Ice::Object\", \"::IceStorm::Topic\", \"::IceStorm::TopicInternal\"]\n\
         Idempotent nonmutating ::IceStorm::TopicLink* getLinkProxy()"
    ));
    assert!(c["::IceStorm::TopicManagerInternal"].starts_with(
        "ids [\"::Ice::Object\", \"::IceStorm::TopicManager\", \
         \"::IceStorm::TopicManagerInternal\"]\n"
    ));
}

#[test]
fn own_slice_is_wire_equivalent_to_the_system_one() {
    let system = Path::new("/usr/share/ice/slice");
    if !system.join("IceStorm/IceStorm.ice").exists() {
        if std::env::var("FLOE_NO_INTEROP").as_deref() == Ok("1") {
            println!("FLOE_NO_INTEROP=1: /usr/share/ice/slice missing, skipping");
            return;
        }
        panic!("/usr/share/ice/slice/IceStorm missing; install zeroc-ice-slice, or set FLOE_NO_INTEROP=1");
    }
    let theirs = contract(&compile(
        &system.join("IceStorm/IceStorm.ice"),
        Some("/usr/share/ice/slice"),
    ));
    let mut mine = without_ice38_additions(contract(&ours()));
    mine.retain(|k, _| !INTERNAL.contains(&k.as_str()));
    assert_eq!(
        mine.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (k, v) in &theirs {
        assert_eq!(&mine[k], v, "{k}");
    }
}
