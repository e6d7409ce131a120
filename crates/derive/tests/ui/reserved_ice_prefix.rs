#[floe::interface(module = "M")]
pub trait Hello {
    async fn ice_stuff(&self);
}

fn main() {}
