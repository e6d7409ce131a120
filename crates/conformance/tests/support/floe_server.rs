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

#[path = "floe_server_api.rs"]
mod api;

type Res<T> = Result<T, DispatchError>;
type UserRes = Res<()>;
type Shared<T> = Option<ClassRef<T>>;

fn reversed<T: Clone>(v: &[T]) -> Vec<T> {
    v.iter().rev().cloned().collect()
}

fn merged<K: Ord + Clone, V: Clone>(p1: &BTreeMap<K, V>, p2: BTreeMap<K, V>) -> BTreeMap<K, V> {
    let mut out = p1.clone();
    out.extend(p2);
    out
}

struct OperationsI {
    last: AtomicI32,
}

macro_rules! seq_ops {
    ($($name:ident -> $r:ident: $t:ty,)*) => {$(
        async fn $name(&self, p1: Vec<$t>, _: &Current) -> Res<$r> {
            Ok((reversed(&p1), p1).into())
        }
    )*};
}

macro_rules! dict_ops {
    ($($name:ident -> $r:ident: $k:ty => $v:ty,)*) => {$(
        async fn $name(
            &self,
            p1: BTreeMap<$k, $v>,
            p2: BTreeMap<$k, $v>,
            _: &Current,
        ) -> Res<$r> {
            Ok((merged(&p1, p2), p1).into())
        }
    )*};
}

impl Operations for OperationsI {
    async fn op_void(&self, _: &Current) -> Res<()> {
        Ok(())
    }
    async fn op_byte(&self, p1: u8, p2: u8, _: &Current) -> Res<OperationsOpByteResult> {
        Ok((p1, p2).into())
    }
    async fn op_bool(&self, p1: bool, p2: bool, _: &Current) -> Res<OperationsOpBoolResult> {
        Ok((p1, p2).into())
    }
    async fn op_short_int_long(
        &self,
        p1: i16,
        p2: i32,
        p3: i64,
        _: &Current,
    ) -> Res<OperationsOpShortIntLongResult> {
        Ok((p3, p1, p2, p3).into())
    }
    async fn op_float_double(
        &self,
        p1: f32,
        p2: f64,
        _: &Current,
    ) -> Res<OperationsOpFloatDoubleResult> {
        Ok((p2, p1, p2).into())
    }
    async fn op_string(
        &self,
        p1: String,
        p2: String,
        _: &Current,
    ) -> Res<OperationsOpStringResult> {
        Ok((format!("{p1}{p2}"), format!("{p2}{p1}")).into())
    }
    async fn op_enum(&self, p1: Color, p2: Level, _: &Current) -> Res<OperationsOpEnumResult> {
        Ok((p1, p2).into())
    }
    async fn op_struct(&self, p1: Point, p2: Record, _: &Current) -> Res<OperationsOpStructResult> {
        Ok((p1, p2).into())
    }
    async fn op_nested(&self, p1: Nested, _: &Current) -> Res<OperationsOpNestedResult> {
        Ok((p1.clone(), p1).into())
    }
    async fn op_defaults(&self, _: &Current) -> Res<Defaults> {
        Ok(Defaults::default())
    }
    async fn op_default_record(&self, _: &Current) -> Res<Record> {
        Ok(Record::default())
    }
    seq_ops! {
        op_bool_seq -> OperationsOpBoolSeqResult: bool,
        op_short_seq -> OperationsOpShortSeqResult: i16,
        op_int_seq -> OperationsOpIntSeqResult: i32,
        op_long_seq -> OperationsOpLongSeqResult: i64,
        op_float_seq -> OperationsOpFloatSeqResult: f32,
        op_double_seq -> OperationsOpDoubleSeqResult: f64,
        op_string_seq -> OperationsOpStringSeqResult: String,
        op_color_seq -> OperationsOpColorSeqResult: Color,
        op_point_seq -> OperationsOpPointSeqResult: Point,
        op_record_seq -> OperationsOpRecordSeqResult: Record,
        op_int_seq_seq -> OperationsOpIntSeqSeqResult: Vec<i32>,
        op_string_seq_seq -> OperationsOpStringSeqSeqResult: Vec<String>,
    }
    async fn op_byte_seq(
        &self,
        p1: floe::codegen::Bytes,
        _: &Current,
    ) -> Res<OperationsOpByteSeqResult> {
        Ok((reversed(&p1).into(), p1).into())
    }
    dict_ops! {
        op_byte_bool_dict -> OperationsOpByteBoolDictResult: u8 => bool,
        op_short_int_dict -> OperationsOpShortIntDictResult: i16 => i32,
        op_long_float_dict -> OperationsOpLongFloatDictResult: i64 => f32,
        op_int_double_dict -> OperationsOpIntDoubleDictResult: i32 => f64,
        op_string_string_dict -> OperationsOpStringStringDictResult: String => String,
        op_string_color_dict -> OperationsOpStringColorDictResult: String => Color,
        op_color_string_dict -> OperationsOpColorStringDictResult: Color => String,
        op_string_int_seq_dict -> OperationsOpStringIntSeqDictResult: String => Vec<i32>,
        op_point_string_dict -> OperationsOpPointStringDictResult: Point => String,
        op_string_record_dict -> OperationsOpStringRecordDictResult: String => Record,
    }
    async fn op_idempotent(&self, p: i32, _: &Current) -> Res<i32> {
        Ok(p + 1)
    }
    async fn op_amd(&self, s: String, _: &Current) -> Res<String> {
        Ok(format!("amd:{s}"))
    }
    async fn op_context(&self, current: &Current) -> Res<BTreeMap<String, String>> {
        Ok(current.ctx.clone())
    }
    async fn op_proxy(
        &self,
        p1: Option<OperationsPrx>,
        _: &Current,
    ) -> Res<OperationsOpProxyResult> {
        let p2 = p1.clone().map(OperationsPrx::into_proxy);
        Ok((p1, p2).into())
    }
    async fn op_oneway_set(&self, v: i32, _: &Current) -> Res<()> {
        self.last.store(v, Ordering::SeqCst);
        Ok(())
    }
    async fn op_oneway_get(&self, _: &Current) -> Res<i32> {
        Ok(self.last.load(Ordering::SeqCst))
    }
}

struct OptionalsI;

macro_rules! opt_ops {
    ($($name:ident -> $r:ident: $t:ty,)*) => {$(
        async fn $name(&self, p1: Option<$t>, _: &Current) -> Res<$r> {
            Ok((p1.clone(), p1).into())
        }
    )*};
}

impl Optionals for OptionalsI {
    opt_ops! {
        op_opt_byte -> OptionalsOpOptByteResult: u8,
        op_opt_bool -> OptionalsOpOptBoolResult: bool,
        op_opt_short -> OptionalsOpOptShortResult: i16,
        op_opt_int -> OptionalsOpOptIntResult: i32,
        op_opt_long -> OptionalsOpOptLongResult: i64,
        op_opt_float -> OptionalsOpOptFloatResult: f32,
        op_opt_double -> OptionalsOpOptDoubleResult: f64,
        op_opt_string -> OptionalsOpOptStringResult: String,
        op_opt_color -> OptionalsOpOptColorResult: Color,
        op_opt_point -> OptionalsOpOptPointResult: Point,
        op_opt_record -> OptionalsOpOptRecordResult: Record,
        op_opt_int_seq -> OptionalsOpOptIntSeqResult: Vec<i32>,
        op_opt_string_seq -> OptionalsOpOptStringSeqResult: Vec<String>,
        op_opt_point_seq -> OptionalsOpOptPointSeqResult: Vec<Point>,
        op_opt_record_seq -> OptionalsOpOptRecordSeqResult: Vec<Record>,
        op_opt_short_int_dict -> OptionalsOpOptShortIntDictResult: BTreeMap<i16, i32>,
        op_opt_string_record_dict -> OptionalsOpOptStringRecordDictResult: BTreeMap<String, Record>,
    }
    // Optional proxies and class references are one `Option`.
    async fn op_opt_base(&self, p1: Shared<Base>, _: &Current) -> Res<OptionalsOpOptBaseResult> {
        Ok((p1.clone(), p1).into())
    }
    async fn op_opt_proxy(
        &self,
        p1: Option<OperationsPrx>,
        _: &Current,
    ) -> Res<OptionalsOpOptProxyResult> {
        Ok((p1.clone(), p1).into())
    }
    async fn op_mixed(
        &self,
        s: Option<String>,
        a: i32,
        i: Option<i32>,
        _: &Current,
    ) -> Res<OptionalsOpMixedResult> {
        Ok((a, s, a + 1, i).into())
    }
    async fn op_with_optionals(
        &self,
        w: Shared<WithOptionals>,
        _: &Current,
    ) -> Res<Shared<WithOptionals>> {
        Ok(w)
    }
    async fn op_opt_error(
        &self,
        req: i32,
        i: Option<i32>,
        s: Option<String>,
        _: &Current,
    ) -> UserRes {
        Err(OptError { req, i, s }.into())
    }
}

/// The nodes reachable from `n`, each once.
fn nodes(n: &Shared<Node>) -> Vec<ClassRef<Node>> {
    let mut out: Vec<ClassRef<Node>> = Vec::new();
    let mut next = n.clone();
    while let Some(node) = next {
        if out.iter().any(|seen| ClassRef::ptr_eq(seen, &node)) {
            break;
        }
        next = node.read().next.clone();
        out.push(node);
    }
    out
}

/// Breaks every link of the graph from `n`, so that a cycle does not leak.
fn break_links(n: &Shared<Node>) {
    for node in nodes(n) {
        node.write().next = None;
    }
}

fn chain(n: i32, cycle: bool) -> Shared<Node> {
    let nodes: Vec<ClassRef<Node>> = (1..=n)
        .map(|value| ClassRef::new(Node { value, next: None }))
        .collect();
    for pair in nodes.windows(2) {
        pair[0].write().next = Some(pair[1].clone());
    }
    if cycle {
        if let (Some(first), Some(last)) = (nodes.first(), nodes.last()) {
            last.write().next = Some(first.clone());
        }
    }
    nodes.into_iter().next()
}

/// Objects: keeps the cycles it sends so that it can break them when the
/// server stops.
#[derive(Default)]
struct ObjectsI {
    cycles: Mutex<Vec<Shared<Node>>>,
}

impl Drop for ObjectsI {
    fn drop(&mut self) {
        for n in self.cycles.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            break_links(n);
        }
    }
}

impl Objects for ObjectsI {
    async fn op_base(&self, p1: Shared<Base>, _: &Current) -> Res<ObjectsOpBaseResult> {
        Ok((p1.clone(), p1).into())
    }
    async fn op_pair(&self, p: Shared<Pair>, _: &Current) -> Res<Shared<Pair>> {
        Ok(p)
    }
    async fn op_base_seq(&self, p: Vec<Shared<Base>>, _: &Current) -> Res<Vec<Shared<Base>>> {
        Ok(p)
    }
    async fn op_base_dict(
        &self,
        p: BTreeMap<String, Shared<Base>>,
        _: &Current,
    ) -> Res<BTreeMap<String, Shared<Base>>> {
        Ok(p)
    }
    async fn op_carrier(&self, h: Carrier, _: &Current) -> Res<Carrier> {
        Ok(h)
    }
    async fn op_value(&self, v: Option<ValuePtr>, _: &Current) -> Res<Option<ValuePtr>> {
        Ok(v)
    }
    async fn op_all_types(&self, a: Shared<AllTypes>, _: &Current) -> Res<Shared<AllTypes>> {
        Ok(a)
    }
    async fn op_compact(&self, c: Shared<Compact>, _: &Current) -> Res<Shared<Compact>> {
        Ok(c)
    }
    async fn op_node(&self, n: Shared<Node>, _: &Current) -> Res<Shared<Node>> {
        self.cycles.lock().unwrap().push(n.clone());
        Ok(n)
    }
    async fn count_nodes(&self, n: Shared<Node>, _: &Current) -> Res<i32> {
        let count = nodes(&n).len() as i32;
        break_links(&n);
        Ok(count)
    }
    async fn make_cycle(&self, n: i32, _: &Current) -> Res<Shared<Node>> {
        let head = chain(n, true);
        self.cycles.lock().unwrap().push(head.clone());
        Ok(head)
    }
    async fn make_chain(&self, n: i32, _: &Current) -> Res<Shared<Node>> {
        Ok(chain(n, false))
    }
    async fn op_base_sliced(&self, p: Shared<Base>, _: &Current) -> Res<Shared<Base>> {
        Ok(p)
    }
}

fn circle(name: &str, radius: f64, inner: Shared<Shape>, label: Option<&str>) -> Circle {
    Circle {
        base: Shape { name: name.into() },
        radius,
        inner,
        label: label.map(str::to_owned),
    }
}

/// `Circle("c", 1.0)`, as its base.
fn small_circle() -> Shared<Shape> {
    Some(ClassRef::new(circle("c", 1.0, None, None)).upcast())
}

/// `Circle("circle", 2.5, label "l")`, as its base.
fn the_circle() -> Shared<Shape> {
    Some(ClassRef::new(circle("circle", 2.5, None, Some("l"))).upcast())
}

fn ring(inner: Shared<Shape>) -> Shared<Shape> {
    Some(
        ClassRef::new(Ring {
            base: circle("ring", 3.0, inner, None),
            width: 0.5,
        })
        .upcast(),
    )
}

fn shape(name: &str) -> Shared<Shape> {
    Some(ClassRef::new(Shape { name: name.into() }))
}

fn derived() -> Shared<Base> {
    Some(
        ClassRef::new(Derived {
            base: Base { b: "d".into() },
            d: 5,
            p: Point { x: 1, y: 2 },
        })
        .upcast(),
    )
}

fn hidden() -> Option<ValuePtr> {
    Some(ValuePtr::new(Hidden { h: "hidden".into() }))
}

fn user(e: impl Into<DispatchError>) -> UserRes {
    Err(e.into())
}

fn server_derived() -> ServerDerivedError {
    ServerDerivedError {
        base: DerivedError {
            base: BaseError {
                reason: "server".into(),
            },
            code: 7,
        },
        detail: "detail".into(),
    }
}

struct ExceptionsI;

impl Exceptions for ExceptionsI {
    async fn throw_base(&self, reason: String, _: &Current) -> UserRes {
        user(BaseError { reason })
    }
    async fn throw_derived(&self, reason: String, code: i32, _: &Current) -> UserRes {
        user(DerivedError {
            base: BaseError { reason },
            code,
        })
    }
    async fn throw_derived_as_derived(&self, reason: String, code: i32, _: &Current) -> UserRes {
        user(DerivedError {
            base: BaseError { reason },
            code,
        })
    }
    async fn throw_class_error(&self, obj: Shared<Base>, _: &Current) -> UserRes {
        user(ClassError {
            base: BaseError {
                reason: "class".into(),
            },
            obj,
        })
    }
    async fn throw_other(&self, n: i32, _: &Current) -> UserRes {
        user(OtherError { n })
    }
    async fn throw_undeclared(&self, _n: i32, _: &Current) -> Res<()> {
        // A servant of an operation without a throws clause cannot raise a
        // user exception with floe's generated code: this is the reply an
        // Ice client makes of one (Ice servers send the exception and
        // clients turn it into UnknownUserException).
        Err(DispatchError::UnknownUserException(
            OtherError::default().ice_id().to_owned(),
        ))
    }
    async fn throw_non_ice(&self, _: &Current) -> Res<()> {
        Err(DispatchError::unknown("not an Ice exception"))
    }
    async fn throw_not_exist(&self, _: &Current) -> Res<()> {
        Err(DispatchError::object_not_exist())
    }
    async fn throw_nothing(&self, _: &Current) -> UserRes {
        Ok(())
    }
    async fn throw_server_derived(&self, _: &Current) -> UserRes {
        user(server_derived())
    }
    async fn throw_shape_error(&self, _: &Current) -> UserRes {
        user(ShapeError {
            shape: small_circle(),
        })
    }
}

struct SlicedExceptionsI;

impl SlicedExceptions for SlicedExceptionsI {
    async fn throw_server_derived(&self, _: &Current) -> UserRes {
        user(server_derived())
    }
    async fn throw_server_base(&self, _: &Current) -> UserRes {
        user(ServerBaseError {
            base: BaseError {
                reason: "server".into(),
            },
            level: 8,
        })
    }
    async fn throw_server_class(&self, _: &Current) -> UserRes {
        user(ServerClassError {
            base: BaseError {
                reason: "classes".into(),
            },
            shape: small_circle(),
            obj: Some(ClassRef::new(Base { b: "b".into() })),
        })
    }
    async fn throw_shape_error(&self, _: &Current) -> UserRes {
        user(ShapeError {
            shape: small_circle(),
        })
    }
    async fn throw_isolated(&self, _: &Current) -> UserRes {
        user(IsolatedError { n: 3 })
    }
    async fn throw_known(&self, _: &Current) -> UserRes {
        user(DerivedError {
            base: BaseError {
                reason: "known".into(),
            },
            code: 9,
        })
    }
}

struct SlicedObjectsI;

impl SlicedObjects for SlicedObjectsI {
    async fn get_circle(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(the_circle())
    }
    async fn get_ring(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(ring(shape("in")))
    }
    async fn get_square(&self, _: &Current) -> Res<Shared<Shape>> {
        let square = Square {
            base: Shape {
                name: "square".into(),
            },
            side: 4.0,
        };
        Ok(Some(ClassRef::new(square).upcast()))
    }
    async fn get_hidden(&self, _: &Current) -> Res<Option<ValuePtr>> {
        Ok(hidden())
    }
    async fn get_linked(&self, _: &Current) -> Res<SlicedObjectsGetLinkedResult> {
        let other = shape("s2");
        let c = ClassRef::new(circle("c", 1.0, other.clone(), None));
        Ok((Some(c.upcast()), other).into())
    }
    async fn get_shapes(&self, _: &Current) -> Res<Vec<Shared<Shape>>> {
        let c = small_circle();
        Ok(vec![c.clone(), shape("plain"), c, None, ring(None)])
    }
    async fn get_shape_dict(&self, _: &Current) -> Res<BTreeMap<i32, Shared<Shape>>> {
        let c = small_circle();
        Ok(BTreeMap::from([
            (1, c.clone()),
            (2, c),
            (3, shape("plain")),
        ]))
    }
    async fn get_keeper(&self, _: &Current) -> Res<Shared<Keeper>> {
        let keeper = KeeperDerived {
            base: Keeper {
                k: "keeper".into(),
                ..Keeper::default()
            },
            extra: "x".into(),
            obj: Some(ClassRef::new(Base { b: "kb".into() })),
            label: Some("kl".into()),
        };
        Ok(Some(ClassRef::new(keeper).upcast()))
    }
    async fn check_keeper(&self, k: Shared<Keeper>, _: &Current) -> Res<String> {
        let Some(k) = k else {
            return Ok("null".into());
        };
        if let Some(d) = k.downcast::<KeeperDerived>() {
            let d = d.read();
            let b = d
                .obj
                .as_ref()
                .map_or("null".to_owned(), |o| o.read().b.clone());
            let label = d.label.clone().unwrap_or_else(|| "unset".into());
            return Ok(format!(
                "KeeperDerived:{}:{}:{b}:{label}",
                d.base.k, d.extra
            ));
        }
        Ok(format!("Keeper:{}", k.read().k))
    }
    async fn check_shape(&self, s: Shared<Shape>, _: &Current) -> Res<String> {
        Ok(match s {
            Some(s) => format!("{}:{}", s.ice_id(), s.read().name),
            None => "null".into(),
        })
    }
    async fn get_derived(&self, _: &Current) -> Res<Shared<Base>> {
        Ok(derived())
    }
    async fn get_more_optionals(&self, _: &Current) -> Res<Shared<WithOptionals>> {
        let w = WithMoreOptionals {
            base: WithOptionals {
                req: 1,
                i: Some(2),
                ..WithOptionals::default()
            },
            extra: Some("x".into()),
            more: Some(3),
        };
        Ok(Some(ClassRef::new(w).upcast()))
    }
}

struct CompactObjectsI;

impl CompactObjects for CompactObjectsI {
    async fn get_circle(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(the_circle())
    }
    async fn get_hidden(&self, _: &Current) -> Res<Option<ValuePtr>> {
        Ok(hidden())
    }
    async fn get_circle_sliced(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(the_circle())
    }
    async fn get_derived(&self, _: &Current) -> Res<Shared<Base>> {
        Ok(derived())
    }
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
