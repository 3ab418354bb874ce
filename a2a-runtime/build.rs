//! Compiles `proto/a2a.proto` with protox (a protobuf compiler written in Rust, so no `protoc`
//! is needed on the build machine) into:
//!
//! - the gRPC binding's messages and service (feature `grpc`), with
//!   `proto/extension_methods.proto`, the service that carries extension methods;
//! - the JSON Schemas of the HTTP+JSON binding's messages and the service's methods, for its
//!   OpenAPI document (feature `openapi`; see `build_openapi.rs`).

#[cfg(feature = "openapi")]
#[path = "build_openapi.rs"]
mod openapi;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(any(feature = "grpc", feature = "openapi"))]
    {
        println!("cargo:rerun-if-changed=proto/a2a.proto");
        println!("cargo:rerun-if-changed=proto/google/api/field_behavior.proto");
        let compiler = match compile() {
            Ok(c) => c,
            Err(e) => panic!("proto/a2a.proto does not compile: {e}"),
        };
        #[cfg(feature = "openapi")]
        openapi::write(&compiler.descriptor_pool());
        #[cfg(feature = "grpc")]
        {
            println!("cargo:rerun-if-changed=proto/extension_methods.proto");
            // Only the gRPC binding serves extension methods this way: the OpenAPI document
            // describes the spec's service alone.
            let mut compiler = compiler;
            if let Err(e) = compiler.open_file("proto/extension_methods.proto") {
                panic!("proto/extension_methods.proto does not compile: {e}");
            }
            grpc(compiler.file_descriptor_set());
        }
    }
}

#[cfg(any(feature = "grpc", feature = "openapi"))]
fn compile() -> Result<protox::Compiler, protox::Error> {
    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_imports(true).include_source_info(true);
    compiler.open_file("proto/a2a.proto")?;
    Ok(compiler)
}

/// The messages and clients into `OUT_DIR`; the servers, on their own, into `OUT_DIR/server`.
///
/// The servers decode requests with the crate's codec (`crate::grpc::codec`): a malformed
/// request is the caller's error (INVALID_ARGUMENT, with the field path), where tonic's codec
/// answers INTERNAL. The clients keep tonic's codec: a malformed response is no fault of the
/// caller's. The server pass takes the messages as extern types (`super::…`, the module it is
/// included in).
#[cfg(feature = "grpc")]
fn grpc(descriptors: protox::prost_reflect::prost_types::FileDescriptorSet) {
    let base = || {
        tonic_prost_build::configure()
            .build_transport(false)
            .btree_map(".")
            .compile_well_known_types(false)
            .emit_rerun_if_changed(false)
    };
    let result = base()
        .build_server(false)
        .client_mod_attribute(".", "#[cfg(feature = \"client\")]")
        .compile_fds(descriptors.clone());
    if let Err(e) = result {
        panic!("could not generate the gRPC messages and clients: {e}");
    }
    let Some(out) = std::env::var_os("OUT_DIR") else {
        panic!("cargo sets OUT_DIR for build scripts");
    };
    let servers = std::path::Path::new(&out).join("server");
    if let Err(e) = std::fs::create_dir_all(&servers) {
        panic!("cannot create {}: {e}", servers.display());
    }
    let result = base()
        .build_client(false)
        .out_dir(&servers)
        .extern_path(".lf.a2a.v1", "crate::grpc::pb")
        .extern_path(
            ".a2a_runtime.extensions.v1",
            "crate::grpc::extension_methods",
        )
        .codec_path("crate::grpc::codec::RequestCodec")
        .server_mod_attribute(".", "#[cfg(feature = \"server\")]")
        .compile_fds(descriptors);
    if let Err(e) = result {
        panic!("could not generate the gRPC servers: {e}");
    }
}
