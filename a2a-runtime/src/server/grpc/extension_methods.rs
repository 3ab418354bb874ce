//! Extension methods over gRPC: `/a2a_runtime.extensions.v1.ExtensionMethods/Call` names the
//! method (its JSON-RPC name) and carries its params; the pipeline serves it as it serves the
//! method over JSON-RPC (see [`crate::grpc::extension_methods`]).

use tonic::{Request, Response, Status};

use super::call::{Call, mismatch, parts, request_meta, response_metadata};
use crate::core::Limits;
use crate::error::A2aError;
use crate::grpc::convert::{from_struct, to_value};
use crate::grpc::extension_methods::ExtensionMethodRequest;
use crate::grpc::extension_methods::extension_methods_server::ExtensionMethods;
use crate::grpc::status::to_status;
use crate::service::{Answer, Decoded, Payload, Target};

pub(super) use crate::grpc::extension_methods::extension_methods_server::ExtensionMethodsServer;

/// The service: a call in, the pipeline, the method's result out.
pub(super) struct Binding {
    pub(super) pipelines: super::Pipelines,
}

/// The params of a call, decoded by tonic already.
struct Params(Option<serde_json::Value>);

impl Payload for Params {
    async fn target(&mut self, _: &Limits) -> Result<Target, A2aError> {
        // The request names its method.
        Err(A2aError::Internal("a gRPC call names its method".into()))
    }

    async fn decode(&mut self, _: &Target, _: &Limits) -> Result<Decoded, A2aError> {
        self.0
            .take()
            .map(Decoded::Method)
            .ok_or_else(|| A2aError::Internal("the params were decoded twice".into()))
    }
}

#[tonic::async_trait]
impl ExtensionMethods for Binding {
    async fn call(
        &self,
        request: Request<ExtensionMethodRequest>,
    ) -> Result<Response<prost_types::Value>, Status> {
        let (call, mut msg): (Call, _) = parts(request);
        let pipeline = self.pipelines.pick_by(&mut msg.tenant)?;
        let mut meta = request_meta(&call, Target::Method(msg.method));
        meta.tenant = (!msg.tenant.is_empty()).then_some(msg.tenant);
        let params = serde_json::Value::Object(msg.params.map(from_struct).unwrap_or_default());
        let answer = pipeline.serve(meta, &mut Params(Some(params))).await;
        match answer.map_err(|e| to_status(&e))? {
            Answer::Method { result, activated } => {
                let mut out = Response::new(to_value(result));
                response_metadata(out.metadata_mut(), &activated);
                Ok(out)
            }
            Answer::Operation(_) => Err(mismatch()),
        }
    }
}
