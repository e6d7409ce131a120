//! The `obj` servant: class instances, graphs and cycles.
//! A child of `floe_server`, whose helpers it uses.

use super::*;

/// The nodes reachable from `n`, each once.
pub(super) fn nodes(n: &Shared<Node>) -> Vec<ClassRef<Node>> {
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
pub(super) fn break_links(n: &Shared<Node>) {
    for node in nodes(n) {
        node.write().next = None;
    }
}

pub(super) fn chain(n: i32, cycle: bool) -> Shared<Node> {
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
pub(super) struct ObjectsI {
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
