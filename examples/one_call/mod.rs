//! [`one_call_main`]: the `main` of the example clients that make one call
//! and print `ok` (`grid_client`, `glacier2_client`).

use floe::runtime::{Communicator, Properties, Result};

/// Parses `NAME FIRST SECOND [--Ice.Prop=value...]`, lets `configure` set
/// properties from `FIRST`, runs `call(communicator, FIRST, SECOND)` on a
/// current-thread runtime, destroys the communicator, and prints `ok`
/// (exit 0) or the error (exit 1); bad arguments exit 2.
pub fn one_call_main(
    name: &str,
    usage: &str,
    configure: impl FnOnce(&Properties, &str),
    call: impl AsyncFnOnce(&Communicator, &str, &str) -> Result<()>,
) {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let props = Properties::from_args(&mut args).unwrap_or_else(|e| {
        eprintln!("{name}: {e}");
        std::process::exit(2)
    });
    let [first, second] = args.as_slice() else {
        eprintln!("usage: {name} {usage} [--Ice.Prop=value...]");
        std::process::exit(2)
    };
    configure(&props, first);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("{name}: {e}");
            std::process::exit(1)
        });
    let result = rt.block_on(async {
        let communicator = Communicator::with_properties(props);
        let result = call(&communicator, first, second).await;
        communicator.destroy().await;
        result
    });
    match result {
        Ok(()) => println!("ok"),
        Err(e) => {
            println!("error: {e}");
            std::process::exit(1)
        }
    }
}
