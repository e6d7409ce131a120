//! Generates the `floe.bench.Bench` gRPC service (client and server stubs)
//! with `tonic_build::manual`: the messages are hand-written prost structs in
//! `src/messages.rs`, so no `.proto` file and no `protoc` are needed.

use tonic_build::manual::{Builder, Method, Service};

fn method(name: &str, route: &str, input: &str, output: &str) -> Method {
    Method::builder()
        .name(name)
        .route_name(route)
        .input_type(format!("crate::messages::{input}"))
        .output_type(format!("crate::messages::{output}"))
        .codec_path("tonic_prost::ProstCodec")
        .build()
}

fn main() {
    // The operations of benches/Bench.ice the compare workloads use.
    let bench = Service::builder()
        .name("Bench")
        .package("floe.bench")
        .method(method("o", "O", "Empty", "Empty"))
        .method(method("send_byte_seq", "SendByteSeq", "ByteSeq", "Empty"))
        .method(method(
            "recv_byte_seq",
            "RecvByteSeq",
            "RecvByteSeq",
            "ByteSeq",
        ))
        .method(method("shutdown", "Shutdown", "Empty", "Empty"))
        .build();
    Builder::new().compile(&[bench]);
    println!("cargo:rerun-if-changed=build.rs");
}
