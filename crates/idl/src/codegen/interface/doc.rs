//! The doc comment of an operation's generated proxy and servant methods.

use proc_macro2::TokenStream;

use super::super::ident::field_ident;
use super::super::Gen;
use crate::model::Operation;

impl Gen<'_> {
    /// The doc of an operation's generated method: the Slice doc comment
    /// (or a summary), the Slice declaration, the outputs in the order the
    /// method returns them, the declared exceptions, and idempotence.
    pub(super) fn op_doc(&self, op: &Operation) -> TokenStream {
        let mut text = match &op.doc {
            Some(d) if !d.summary.is_empty() => d.summary.clone(),
            _ => format!("Slice operation `{}`.", op.name),
        };
        text.push_str(&format!(
            "\n\n```slice\n{}\n```",
            crate::export::operation_signature(self.model, op)
        ));
        if let Some(d) = &op.doc {
            for (p, t) in &d.params {
                text.push_str(&format!("\n\n- `{}`: {t}", field_ident(p)));
            }
            if let Some(r) = &d.returns {
                text.push_str(&format!("\n\nReturns: {r}"));
            }
        }
        let mut outputs: Vec<String> = Vec::new();
        if op.return_type.is_some() {
            outputs.push("the return value".to_owned());
        }
        outputs.extend(op.out_params().map(|p| format!("`{}`", p.name)));
        if self.named_outputs(op) {
            text.push_str(&format!(
                "\n\nOutputs: one struct field each ({}), convertible to a tuple in this order.",
                outputs.join(", ")
            ));
        } else if outputs.len() > 1 {
            text.push_str(&format!(
                "\n\nOutputs, as a tuple in this order: {}.",
                outputs.join(", ")
            ));
        }
        if !op.throws.is_empty() {
            let list: Vec<String> = op
                .throws
                .iter()
                .map(|t| format!("`{}`", self.model.def(*t).scoped))
                .collect();
            text.push_str(&format!(
                "\n\nDeclared user exceptions: {}.",
                list.join(", ")
            ));
        }
        if op.mode == crate::model::OperationMode::Idempotent {
            text.push_str("\n\nIdempotent: the runtime may retry it after a connection failure.");
        }
        super::super::ident::doc_attrs(&text)
    }
}
