//! How invocations are observed by the metrics views (Ice's `Invocation`
//! map): the attributes an invocation offers to `GroupBy`, `Accept.*` and
//! `Reject.*`, and the calls [`Proxy::invoke`] makes. Its remote attempts
//! are observed by `crate::connection::observe`.

use std::any::Any;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use floe_wire::Context;

use super::Proxy;
use crate::metrics::attributes::{
    context_attr, identity_string, same, Attributes, Token, COMMUNICATOR,
};
use crate::metrics::{MapKind, MetricsAdmin, Observer, Tick};

/// An invocation (`Invocation` map).
pub(crate) struct InvocationAttrs<'a> {
    pub(crate) proxy: &'a Proxy,
    pub(crate) operation: &'a str,
    pub(crate) context: &'a Context,
}

impl InvocationAttrs<'_> {
    /// Ice's name of the proxy's invocation mode.
    fn mode(&self) -> &'static str {
        let m = self.proxy.inner.mode;
        if m.is_datagram() {
            if m.is_batch() {
                "batch-datagram"
            } else {
                "datagram"
            }
        } else if m.is_batch() {
            "batch-oneway"
        } else if m.is_twoway() {
            "twoway"
        } else {
            "oneway"
        }
    }
}

impl Attributes for InvocationAttrs<'_> {
    fn get(&self, name: &str) -> Option<String> {
        let p = &*self.proxy.inner;
        Some(match name {
            "parent" => COMMUNICATOR.to_string(),
            // The proxy's string form without endpoints (Ice's id prefix).
            "id" => format!(
                "{} [{}]",
                self.proxy.ice_endpoints(Vec::new()),
                self.operation
            ),
            "operation" => self.operation.to_string(),
            "identity" => identity_string(&p.identity),
            "facet" => p.facet.clone(),
            "encoding" => format!("{}.{}", p.encoding.major, p.encoding.minor),
            "mode" => self.mode().to_string(),
            "proxy" => self.proxy.to_string(),
            _ => return context_attr(self.context, name),
        })
    }

    fn token(&self) -> Option<Token> {
        let proxy: Weak<dyn Any + Send + Sync> = Arc::downgrade(&self.proxy.inner) as Weak<_>;
        Some(Token::Invocation {
            _proxy: proxy,
            at: Arc::as_ptr(&self.proxy.inner) as usize,
            operation: self.operation.to_string(),
        })
    }

    fn is(&self, token: &Token) -> bool {
        matches!(token, Token::Invocation { at, operation, .. }
            if *at == Arc::as_ptr(&self.proxy.inner) as usize && same(operation, self.operation))
    }
}

/// An invocation through `proxy`.
pub(crate) fn invocation(
    admin: &MetricsAdmin,
    proxy: &Proxy,
    operation: &str,
    context: &Context,
) -> Option<Observer> {
    let attrs = InvocationAttrs {
        proxy,
        operation,
        context,
    };
    admin.observe(MapKind::Invocation, &attrs)
}

/// The successful end of an observed invocation (`user_exception`:
/// one is counted), as of `now` (the end of its last remote attempt,
/// when there was one).
pub(crate) fn invoked(obs: &Observer, user_exception: bool, now: Option<Tick>) {
    if user_exception {
        obs.each(|e| {
            e.user_exception.fetch_add(1, Ordering::Relaxed);
        });
    }
    match now {
        Some(now) => obs.end_at(now),
        None => {
            obs.end();
        }
    }
}

/// A retry of an observed invocation.
pub(crate) fn retried(obs: &Observer) {
    obs.each(|e| {
        e.retry.fetch_add(1, Ordering::Relaxed);
    });
}
