#[floe::interface(module = "M")]
pub trait Hello {
    #[floe(name = "sayHello")]
    async fn greet(&self) -> String;
}

fn main() {}
