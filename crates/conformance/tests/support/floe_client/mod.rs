//! The floe client of the conformance suite: the checks of
//! `peers/client.py` and `peers/client.cpp`, with the same names, written
//! against the typed proxies generated from `Conformance.ice` alone (the
//! client's view: no server-only type).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

use floe::codegen::{ClassRef, UserError, UserException, ValuePtr};
use floe::runtime::{Communicator, Error, Properties};
use floe::wire::class::UnknownSlicedValue;
use floe::wire::{ENCODING_1_0, ENCODING_1_1};
use floe_conformance::client_gen::conf::*;

use super::Report;

/// A failed check's detail.
#[derive(Debug)]
pub struct Fail(String);

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail(format!(
            "unexpected {}: {}",
            e.ice_name(),
            e.to_string().replace('\n', " ")
        ))
    }
}

type R = Result<(), Fail>;
type Shared<T> = Option<ClassRef<T>>;
type UserResult = floe::runtime::Result<()>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(Fail(format!($($fmt)*)));
        }
    };
}

fn eq<T: PartialEq + Debug>(got: T, want: T, what: &str) -> R {
    ensure!(got == want, "{what}: got {got:?}, want {want:?}");
    Ok(())
}

/// Ice's exceptions derived from `MarshalException`.
const MARSHAL_FAMILY: &[&str] = &[
    "::Ice::MarshalException",
    "::Ice::NoValueFactoryException",
    "::Ice::UnmarshalOutOfBoundsException",
    "::Ice::UnexpectedObjectException",
    "::Ice::ProxyUnmarshalException",
    "::Ice::MemoryLimitException",
    "::Ice::EncapsulationException",
];

/// Whether an error named `name` is caught as `want`, as in Ice's
/// exception hierarchy.
fn caught_as(name: &str, want: &str) -> bool {
    name == want || (want == "::Ice::MarshalException" && MARSHAL_FAMILY.contains(&name))
}

/// `r` must have failed with the Ice exception `want` (or one derived from it).
fn raises<T: Debug>(r: floe::runtime::Result<T>, want: &str) -> Result<Error, Fail> {
    match r {
        Err(e) if caught_as(e.ice_name(), want) => Ok(e),
        Err(e) => Err(Fail(format!(
            "expected {want}, got {}: {}",
            e.ice_name(),
            e.to_string().replace('\n', " ")
        ))),
        Ok(v) => Err(Fail(format!("expected {want}, got {v:?}"))),
    }
}

/// `r` must have raised a declared user exception: it.
fn user_error(r: UserResult) -> Result<UserError, Fail> {
    match r {
        Err(Error::UserException(e)) => Ok(e),
        Err(e) => Err(e.into()),
        Ok(()) => Err(Fail("no user exception".into())),
    }
}

/// `r` must have raised the user exception `T` exactly.
fn user_error_as<T: UserException + Clone>(r: UserResult) -> Result<T, Fail> {
    let e = user_error(r)?;
    match e.downcast_ref::<T>() {
        Some(t) if e.ice_id() == t.ice_id() => Ok(t.clone()),
        _ => Err(Fail(format!("got the user exception {}", e.ice_id()))),
    }
}

/// The text an `UnknownUserException` or `UnknownLocalException` carries.
fn unknown_text(e: &Error) -> String {
    match e {
        Error::UnknownUserException(t)
        | Error::UnknownLocalException(t)
        | Error::UnknownException(t) => t.clone(),
        other => other.to_string(),
    }
}

fn record(name: &str) -> Record {
    Record {
        name: name.into(),
        weight: 2.5,
        flag: true,
        values: vec![1, 2, 3],
        color: Color::Blue,
    }
}

fn base(b: &str) -> Shared<Base> {
    Some(ClassRef::new(Base { b: b.into() }))
}

fn derived(b: &str, d: i32) -> Shared<Base> {
    Some(
        ClassRef::new(Derived {
            base: Base { b: b.into() },
            d,
            p: Point { x: 1, y: 2 },
        })
        .upcast(),
    )
}

fn same_derived(got: &Shared<Base>, b: &str, d: i32, what: &str) -> R {
    let got = got.as_ref().ok_or_else(|| Fail(format!("{what}: null")))?;
    let x = got
        .downcast::<Derived>()
        .filter(|_| got.ice_id() == "::Conf::Derived")
        .ok_or_else(|| Fail(format!("{what}: a {} is not a Derived", got.ice_id())))?;
    let x = x.read();
    eq(
        (x.base.b.as_str(), x.d, x.p.clone()),
        (b, d, Point { x: 1, y: 2 }),
        what,
    )
}

fn same_derived_value(got: &Option<ValuePtr>, b: &str, d: i32, what: &str) -> R {
    let got = got.as_ref().ok_or_else(|| Fail(format!("{what}: null")))?;
    same_derived(&got.downcast::<Base>(), b, d, what)
}

fn plain_shape(s: &Shared<Shape>, name: &str, what: &str) -> R {
    let s = s.as_ref().ok_or_else(|| Fail(format!("{what}: null")))?;
    ensure!(
        s.ice_id() == "::Conf::Shape",
        "{what}: a {} is not a plain Shape",
        s.ice_id()
    );
    eq(s.read().name.as_str(), name, what)
}

fn ident(p: &floe::codegen::Proxy) -> String {
    floe::wire::identity_to_string(p.identity(), floe::wire::ToStringMode::Unicode)
}

/// The nodes of a chain or cycle, each once, at most 1000.
fn nodes(n: &Shared<Node>) -> Vec<ClassRef<Node>> {
    let mut out: Vec<ClassRef<Node>> = Vec::new();
    let mut next = n.clone();
    while let Some(node) = next {
        if out.len() == 1000 || out.iter().any(|seen| ClassRef::ptr_eq(seen, &node)) {
            break;
        }
        next = node.read().next.clone();
        out.push(node);
    }
    out
}

fn values(n: &Shared<Node>) -> Vec<i32> {
    nodes(n).iter().map(|n| n.read().value).collect()
}

fn break_links(n: &Shared<Node>) {
    for node in nodes(n) {
        node.write().next = None;
    }
}

fn chain_of(n: i32) -> Shared<Node> {
    let mut head = None;
    for value in (1..=n).rev() {
        head = Some(ClassRef::new(Node { value, next: head }));
    }
    head
}

/// Nodes 1 -> 2 -> 1.
fn cycle() -> Shared<Node> {
    let a = ClassRef::new(Node {
        value: 1,
        next: None,
    });
    let b = ClassRef::new(Node {
        value: 2,
        next: Some(a.clone()),
    });
    a.write().next = Some(b);
    Some(a)
}

/// One configuration's proxies.
pub struct Ctx {
    communicator: Communicator,
    port: u16,
    /// The server's adapter of facets and default servants.
    facets_port: u16,
    enc10: bool,
    cycles: bool,
    /// The server's kind: `cpp`, `python`, `python38` (Ice 3.8) or `floe`.
    server: String,
    ops: OperationsPrx,
    opt: OptionalsPrx,
    obj: ObjectsPrx,
    exc: ExceptionsPrx,
    sexc: SlicedExceptionsPrx,
    sobj: SlicedObjectsPrx,
    cobj: CompactObjectsPrx,
    relaying: RelayingPrx,
    vf: ValuesPrx,
    /// The client's own Relay servant, in the configuration's encoding.
    relay: RelayPrx,
}

impl Ctx {
    fn proxy(&self, name: &str) -> floe::codegen::Proxy {
        proxy(&self.communicator, self.port, self.enc10, name)
    }

    /// Ice for C++ (and floe, which follows it) refuses class graphs with
    /// cycles unless `Ice.AcceptClassCycles` is set; in encoding 1.0 it
    /// only sees an instance that refers to itself. Ice for Python (3.7
    /// and 3.8) accepts every cycle. Whether a peer of `kind` refuses one
    /// here:
    fn refuses(&self, kind: &str, self_loop: bool) -> bool {
        !matches!(kind, "python" | "python38") && !self.cycles && (self_loop || !self.enc10)
    }

    /// Whether the server's exceptions come in the sliced format: 1.0
    /// always writes slice sizes, and Ice 3.8 marshals every exception in
    /// the sliced format.
    fn sliced_exceptions(&self) -> bool {
        self.enc10 || self.server == "python38"
    }
}

fn proxy(communicator: &Communicator, port: u16, enc10: bool, name: &str) -> floe::codegen::Proxy {
    communicator
        .string_to_proxy(&format!("{name}:tcp -h 127.0.0.1 -p {port} -t 10000"))
        .expect("a proxy string")
        .ice_encoding_version(if enc10 { ENCODING_1_0 } else { ENCODING_1_1 })
}

// ------------------------------------------------------------ driver

// The checks, by group; the macros above are in scope in each file.
mod api;
mod exceptions;
mod objects;
mod ops;
mod optionals;
mod sliced;

use exceptions::*;
use objects::*;
use ops::*;
use optionals::*;
use sliced::*;

macro_rules! checks {
    ($($name:literal => $f:path,)*) => {
        /// Every check, in the order the Python and C++ clients run them.
        pub const CHECKS: &[&str] = &[$($name),*];

        async fn run_check(name: &str, c: &Ctx) -> R {
            match name {
                $($name => $f(c).await,)*
                _ => unreachable!("no check {name}"),
            }
        }
    };
}

checks! {
    "ops.void" => ops_void,
    "ops.builtins" => ops_builtins,
    "ops.checked_cast" => ops_checked_cast,
    "ops.byte" => ops_byte,
    "ops.bool" => ops_bool,
    "ops.short_int_long" => ops_short_int_long,
    "ops.float_double" => ops_float_double,
    "ops.float_special" => ops_float_special,
    "ops.string" => ops_string,
    "ops.string_long" => ops_string_long,
    "ops.enum" => ops_enum,
    "ops.struct" => ops_struct,
    "ops.nested" => ops_nested,
    "ops.defaults" => ops_defaults,
    "ops.default_record" => ops_default_record,
    "ops.bool_seq" => ops_bool_seq,
    "ops.byte_seq" => ops_byte_seq,
    "ops.short_seq" => ops_short_seq,
    "ops.int_seq" => ops_int_seq,
    "ops.int_seq_large" => ops_int_seq_large,
    "ops.long_seq" => ops_long_seq,
    "ops.float_seq" => ops_float_seq,
    "ops.double_seq" => ops_double_seq,
    "ops.string_seq" => ops_string_seq,
    "ops.color_seq" => ops_color_seq,
    "ops.point_seq" => ops_point_seq,
    "ops.record_seq" => ops_record_seq,
    "ops.int_seq_seq" => ops_int_seq_seq,
    "ops.string_seq_seq" => ops_string_seq_seq,
    "ops.byte_bool_dict" => ops_byte_bool_dict,
    "ops.short_int_dict" => ops_short_int_dict,
    "ops.long_float_dict" => ops_long_float_dict,
    "ops.int_double_dict" => ops_int_double_dict,
    "ops.string_string_dict" => ops_string_string_dict,
    "ops.string_color_dict" => ops_string_color_dict,
    "ops.color_string_dict" => ops_color_string_dict,
    "ops.string_int_seq_dict" => ops_string_int_seq_dict,
    "ops.point_string_dict" => ops_point_string_dict,
    "ops.string_record_dict" => ops_string_record_dict,
    "ops.idempotent" => ops_idempotent,
    "ops.amd" => ops_amd,
    "ops.context" => ops_context,
    "ops.proxy" => ops_proxy,
    "ops.oneway" => ops_oneway,
    "opt.byte" => opt_byte,
    "opt.bool" => opt_bool,
    "opt.short" => opt_short,
    "opt.int" => opt_int,
    "opt.long" => opt_long,
    "opt.float" => opt_float,
    "opt.double" => opt_double,
    "opt.string" => opt_string,
    "opt.enum" => opt_enum,
    "opt.fixed_struct" => opt_fixed_struct,
    "opt.var_struct" => opt_var_struct,
    "opt.int_seq" => opt_int_seq,
    "opt.string_seq" => opt_string_seq,
    "opt.fixed_struct_seq" => opt_fixed_struct_seq,
    "opt.var_struct_seq" => opt_var_struct_seq,
    "opt.dict" => opt_dict,
    "opt.struct_dict" => opt_struct_dict,
    "opt.class" => opt_class,
    "opt.proxy" => opt_proxy,
    "opt.mixed" => opt_mixed,
    "opt.class_members_set" => opt_class_members_set,
    "opt.class_members_unset" => opt_class_members_unset,
    "opt.exception" => opt_exception,
    "obj.base" => obj_base,
    "obj.derived" => obj_derived,
    "obj.null" => obj_null,
    "obj.compact_id" => obj_compact_id,
    "obj.shared" => obj_shared,
    "obj.distinct" => obj_distinct,
    "obj.seq" => obj_seq,
    "obj.dict" => obj_dict,
    "obj.struct_member" => obj_struct_member,
    "obj.value" => obj_value,
    "obj.all_types" => obj_all_types,
    "obj.chain" => obj_chain,
    "obj.deep_chain" => obj_deep_chain,
    "obj.deep_chain_send" => obj_deep_chain_send,
    "obj.cycle_send" => obj_cycle_send,
    "obj.cycle_return" => obj_cycle_return,
    "obj.cycle_echo" => obj_cycle_echo,
    "obj.sliced_format" => obj_sliced_format,
    "exc.base" => exc_base,
    "exc.derived" => exc_derived,
    "exc.derived_declared" => exc_derived_declared,
    "exc.class_member" => exc_class_member,
    "exc.other" => exc_other,
    "exc.undeclared" => exc_undeclared,
    "exc.non_ice" => exc_non_ice,
    "exc.not_exist" => exc_not_exist,
    "exc.nothing" => exc_nothing,
    "exc.object_not_exist" => exc_object_not_exist,
    "exc.facet_not_exist" => exc_facet_not_exist,
    "exc.operation_not_exist" => exc_operation_not_exist,
    "exc.server_derived_compact" => exc_server_derived_compact,
    "exc.shape_error_compact" => exc_shape_error_compact,
    "sexc.server_derived" => sexc_server_derived,
    "sexc.server_base" => sexc_server_base,
    "sexc.server_class" => sexc_server_class,
    "sexc.shape_error" => sexc_shape_error,
    "sexc.isolated" => sexc_isolated,
    "sexc.known" => sexc_known,
    "sobj.circle" => sobj_circle,
    "sobj.ring" => sobj_ring,
    "sobj.compact_id" => sobj_compact_id,
    "sobj.unknown" => sobj_unknown,
    "sobj.linked" => sobj_linked,
    "sobj.seq" => sobj_seq,
    "sobj.dict" => sobj_dict,
    "sobj.preserved" => sobj_preserved,
    "sobj.not_preserved" => sobj_not_preserved,
    "sobj.known_derived" => sobj_known_derived,
    "sobj.unknown_optionals" => sobj_unknown_optionals,
    "cobj.circle" => cobj_circle,
    "cobj.unknown" => cobj_unknown,
    "cobj.circle_sliced" => cobj_circle_sliced,
    "cobj.known_derived" => cobj_known_derived,
    "relay.preserved" => api::relay_preserved,
    "relay.unpreserved" => api::relay_unpreserved,
    "facet.default" => api::facet_default,
    "facet.named" => api::facet_named,
    "facet.fallback" => api::facet_fallback,
    "facet.category_default" => api::facet_category_default,
    "facet.any_default" => api::facet_any_default,
    "loc.category" => api::loc_category,
    "loc.default_category" => api::loc_default_category,
    "loc.missing" => api::loc_missing,
    "loc.cookie" => api::loc_cookie,
    "loc.locate_user" => api::loc_locate_user,
    "loc.locate_not_exist" => api::loc_locate_not_exist,
    "loc.locate_local" => api::loc_locate_local,
    "loc.locate_other" => api::loc_locate_other,
    "loc.servant_user" => api::loc_servant_user,
    "loc.finished_user" => api::loc_finished_user,
    "loc.finished_not_exist" => api::loc_finished_not_exist,
    "loc.finished_local" => api::loc_finished_local,
    "loc.finished_other" => api::loc_finished_other,
    "loc.deactivate" => api::loc_deactivate,
    "vf.interface_by_value" => api::vf_interface_by_value,
    "vf.hooks_returned" => api::vf_hooks_returned,
    "vf.hooks_sent" => api::vf_hooks_sent,
    "cls.ops" => api::cls_ops,
    "cls.type_ids" => api::cls_type_ids,
    "cls.checked_cast" => api::cls_checked_cast,
    "bi.ping" => api::bi_ping,
    "bi.is_a" => api::bi_is_a,
    "bi.ids" => api::bi_ids,
    "deact.from_servant" => api::deact_from_servant,
    "optn.sent" => api::optn_sent,
    "optn.returned" => api::optn_returned,
    "info.endpoint" => api::info_endpoint,
}

/// Runs every check in the four configurations (see `super::CONFIGS`)
/// against a server of `server_kind` on `ports`.
pub async fn run(ports: super::Ports, server_kind: &str) -> Report {
    let super::Ports {
        port,
        cycles_port,
        facets_port,
    } = ports;
    let plain = Communicator::new();
    let props = Properties::new();
    props.set("Ice.AcceptClassCycles", "1");
    let cyc = Communicator::with_properties(props);
    let plain_relay = api::relay_proxy(&plain).await;
    let cyc_relay = api::relay_proxy(&cyc).await;
    let name = format!("floe client -> {} server", super::display(server_kind));
    let mut report = Report::new(&name);
    for &(config, enc10, cycles, objects_only) in super::CONFIGS {
        let communicator = if cycles { cyc.clone() } else { plain.clone() };
        let port = if cycles { cycles_port } else { port };
        let p = |name: &str| proxy(&communicator, port, enc10, name);
        let c = Ctx {
            ops: OperationsPrx::unchecked_cast(p("ops")),
            opt: OptionalsPrx::unchecked_cast(p("opt")),
            obj: ObjectsPrx::unchecked_cast(p("obj")),
            exc: ExceptionsPrx::unchecked_cast(p("exc")),
            sexc: SlicedExceptionsPrx::unchecked_cast(p("sexc")),
            sobj: SlicedObjectsPrx::unchecked_cast(p("sobj")),
            cobj: CompactObjectsPrx::unchecked_cast(p("cobj")),
            relaying: RelayingPrx::unchecked_cast(p("relaying")),
            vf: ValuesPrx::unchecked_cast(p("vf")),
            relay: RelayPrx::unchecked_cast(
                if cycles { &cyc_relay } else { &plain_relay }
                    .proxy()
                    .ice_encoding_version(if enc10 { ENCODING_1_0 } else { ENCODING_1_1 }),
            ),
            communicator,
            port,
            facets_port,
            enc10,
            cycles,
            server: server_kind.to_owned(),
        };
        for &check in CHECKS {
            if objects_only && !check.starts_with("obj.") {
                continue;
            }
            let outcome = run_check(check, &c).await.err().map(|f| f.0);
            report.record(&format!("{config}/{check}"), outcome);
        }
    }
    plain.destroy().await;
    cyc.destroy().await;
    report
}
