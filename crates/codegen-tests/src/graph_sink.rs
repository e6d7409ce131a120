//! [`GraphSink`]: the `Graph::Sink` servant (`slice/ClassGraph.ice`) of the
//! class-graph memory measurement (`examples/class_graph_rss.rs`) and
//! tests (`tests/class_budget.rs`).

use floe::codegen::{ClassRef, Current, DispatchError};

use crate::class_graph_gen::graph;

/// Counts what it receives and makes what it is asked for.
pub struct GraphSink;

impl graph::Sink for GraphSink {
    async fn count(
        &self,
        items: Vec<Option<ClassRef<graph::Item>>>,
        _: &Current,
    ) -> Result<i32, DispatchError> {
        Ok(items.iter().flatten().count() as i32)
    }
    async fn count_empty(
        &self,
        items: Vec<Option<ClassRef<graph::Empty>>>,
        _: &Current,
    ) -> Result<i32, DispatchError> {
        Ok(items.iter().flatten().count() as i32)
    }
    async fn put(&self, n: i32, _: &Current) -> Result<i32, DispatchError> {
        Ok(n)
    }
    async fn make(
        &self,
        n: i32,
        _: &Current,
    ) -> Result<Vec<Option<ClassRef<graph::Item>>>, DispatchError> {
        Ok((0..n)
            .map(|v| Some(ClassRef::new(graph::Item { v })))
            .collect())
    }
    async fn make_empty(
        &self,
        n: i32,
        _: &Current,
    ) -> Result<Vec<Option<ClassRef<graph::Empty>>>, DispatchError> {
        Ok((0..n)
            .map(|_| Some(ClassRef::new(graph::Empty {})))
            .collect())
    }
}
