// A base in another module is named by its module path (`base::Base`):
// through a plain `use base::Base` the derived interface cannot reach
// `BasePrx`, `BaseSlice` and the base's scope module.
mod base {
    #[floe::interface(module = "M")]
    pub trait Base {
        async fn ping(&self);
    }
}

use base::Base;

#[floe::interface(module = "M")]
pub trait Derived: Base {
    async fn pong(&self);
}

fn main() {}
