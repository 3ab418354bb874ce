//! `ExtensionHooks::init` with the operator's options: what it sets is what every request's
//! hooks see, and an `init` that fails stops the build with an error naming the extension.

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::extension::{
    ExtensionHooks, ExtensionOptions, RegistryError, Reply, RequestContext,
};
use a2a_runtime::protocol::A2aRequest;
use a2a_runtime::server::BuildError;
use a2a_runtime::test::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::*;

const URI: &str = "https://test.example/ext/greeting/v1";

/// Puts the operator's greeting into the metadata of every task result.
#[a2a_extension(uri = "https://test.example/ext/greeting/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Greeting {
    /// Published on the card.
    language: String,
    /// Set by `init` from the options; never published.
    #[serde(skip)]
    greeting: String,
}

/// The options `Greeting` needs.
struct Salutation(&'static str);

impl ExtensionHooks for Greeting {
    type Activation = ();

    fn init(&mut self, options: &ExtensionOptions) -> Result<(), A2aError> {
        let Salutation(text) = options.require::<Greeting, Salutation>()?;
        if text.is_empty() {
            return Err(A2aError::Internal("the salutation is empty".into()));
        }
        self.greeting = format!("{text} ({})", self.language);
        Ok(())
    }

    fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        _: &mut (),
        _: &A2aRequest,
        _: &RequestContext,
    ) -> Result<(), A2aError> {
        if let Reply::SendMessage(a2a_runtime::types::SendMessageResponse::Task(task)) = reply {
            task.metadata.insert(URI.into(), json!(self.greeting));
        }
        Ok(())
    }
}

fn greeting() -> Greeting {
    Greeting {
        language: "en".into(),
        greeting: String::new(),
    }
}

#[tokio::test]
async fn init_gets_the_options_and_every_request_sees_what_it_set() {
    let srv = start(builder().extension_with(greeting(), Salutation("hello"))).await;
    let card = srv.card().await;
    let decl = &card.capabilities.extensions[0];
    assert_eq!(decl.uri, URI);
    // The params are published; what init derived from the options is not.
    assert_eq!(decl.params.0.get("language"), Some(&json!("en")));
    assert_eq!(decl.params.0.get("greeting"), None);
    for binding in Binding::BOTH {
        let task = srv
            .request(binding, "SendMessage", send_params("hi"))
            .header("A2A-Extensions", URI)
            .result()
            .await
            .unwrap();
        assert_eq!(task["task"]["metadata"][URI], "hello (en)", "{binding:?}");
    }
    srv.stop().await;
}

#[test]
fn an_init_that_fails_stops_the_build_naming_the_extension() {
    // Options missing, of another type, or refused by the extension.
    for builder in [
        builder().extension(greeting()),
        builder().extension_with(greeting(), 42_u32),
        builder().extension_with(greeting(), Salutation("")),
    ] {
        let err = builder.build().expect_err("init must fail");
        let BuildError::Extensions(RegistryError::Init { uri, error }) = &err else {
            panic!("not an init error: {err}");
        };
        assert_eq!(uri, URI);
        assert!(matches!(error, A2aError::Internal(_)), "{error:?}");
        assert!(err.to_string().contains(URI), "{err}");
    }
    // The options of another extension are not this one's.
    let err = builder()
        .extension_with(
            a2a_runtime::extension::TimestampExtension::default(),
            Salutation("hi"),
        )
        .extension(greeting())
        .build()
        .expect_err("no options for Greeting");
    assert!(err.to_string().contains("needs options of type"), "{err}");
}
