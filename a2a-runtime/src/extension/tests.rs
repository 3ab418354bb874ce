//! Unit tests of the extension set: resolution, negotiation, hooks.
#![allow(clippy::unwrap_used)]
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::implemented::HOOK_ALL;
use super::registry::ExtensionConfig;
use super::set::RECENT_VALUES;
use super::traits::DynExtension;
use super::{
    Activate, Activation, Extension, ExtensionSet, Negotiated, Reply, RequestContext,
    TimestampExtension,
};
use crate::error::A2aError;
use crate::protocol::A2aRequest;
use crate::types::StreamResponse;

/// Counts the `a2a_extension` spans opened.
struct Spans(Arc<AtomicUsize>);

impl tracing::Subscriber for Spans {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        if span.metadata().name() == "a2a_extension" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn hooks_run_in_a_span_per_extension_when_a_subscriber_listens() {
    let mut config = ExtensionConfig::new();
    config.linked = false;
    config.add(TimestampExtension::default());
    let set = config.resolve().unwrap();
    let requested = || vec![TimestampExtension::URI.to_owned()];
    let ctx = crate::extension::RequestContext::v1();
    // Without a subscriber: activated all the same (no span is built).
    assert_eq!(set.activate(requested(), &ctx).unwrap().activated.len(), 1);
    let spans = Arc::new(AtomicUsize::new(0));
    let negotiated = tracing::subscriber::with_default(Spans(spans.clone()), || {
        set.activate(requested(), &ctx).unwrap()
    });
    assert_eq!(negotiated.activated.len(), 1);
    assert_eq!(spans.load(Ordering::SeqCst), 1, "one activate span");
}

/// A plain extension.
#[crate::a2a_extension(uri = "https://example.com/test/a/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct A {}

/// Another plain extension.
#[crate::a2a_extension(uri = "https://example.com/test/b/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct B {}

/// A required extension.
#[crate::a2a_extension(
    uri = "https://example.com/test/r/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct R {}

/// `handle_request` calls.
static COUNTED_REQUESTS: AtomicUsize = AtomicUsize::new(0);

/// Implements `handle_request` (counting calls, changing nothing) and nothing else.
#[crate::a2a_extension(uri = "https://example.com/test/counted/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Counted {}

impl crate::extension::ExtensionHooks for Counted {
    type Activation = u32;

    fn handle_request(
        &self,
        _: &mut A2aRequest,
        seen: &mut u32,
        _: &RequestContext,
    ) -> Result<(), A2aError> {
        *seen += 1;
        COUNTED_REQUESTS.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

fn set_of(exts: Vec<Box<dyn DynExtension>>) -> ExtensionSet {
    let mut config = ExtensionConfig::new();
    config.linked = false;
    config.explicit = exts;
    config.resolve().unwrap()
}

/// Negotiates one request that sent `values` in `A2A-Extensions`.
fn negotiate(set: &ExtensionSet, values: &[&str]) -> Result<Arc<Negotiated>, A2aError> {
    let ctx = RequestContext::v1();
    let begun = set.begin(values.iter().copied())?.unwrap_or_default();
    set.activate_begun(&begun, &ctx)
}

fn uris(n: &Negotiated) -> Vec<&'static str> {
    n.activated_uris().collect()
}

#[test]
fn a_header_value_that_is_not_utf8_counts_as_not_sent() {
    let set = set_of(vec![A {}.__into_dyn()]);
    let latin1: &[u8] = b"https://example.com/test/a/v1, caf\xe9";
    assert!(set.begin([latin1]).unwrap().is_none());
    // Asked again (nothing was cached for it), and among several values it is skipped.
    assert!(set.begin([latin1]).unwrap().is_none());
    let begun = set.begin([latin1, A::URI.as_bytes()]).unwrap().unwrap();
    assert_eq!(&*begun.requested, [A::URI]);
    // Not sent: a required extension is missing.
    let required = set_of(vec![R {}.__into_dyn()]);
    assert!(matches!(
        required.begin([latin1]),
        Err(A2aError::ExtensionSupportRequired { .. })
    ));
}

#[test]
fn a_header_value_after_a_cached_one_gets_its_own_negotiation() {
    let set = set_of(vec![A {}.__into_dyn(), B {}.__into_dyn()]);
    let (a, b) = (A::URI, B::URI);
    let first = set.begin([a]).unwrap().unwrap();
    let again = set.begin([a]).unwrap().unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "the same value is negotiated once"
    );
    assert_eq!(&*again.requested, [a]);
    assert_eq!(uris(&negotiate(&set, &[a]).unwrap()), [a]);

    let both = format!("{b}, {a}");
    let n = negotiate(&set, &[&both]).unwrap();
    assert_eq!(&*n.requested, [b, a]);
    assert_eq!(uris(&n), [a, b], "declaration order");
    assert_eq!(uris(&negotiate(&set, &[b]).unwrap()), [b]);
    assert_eq!(uris(&negotiate(&set, &[a]).unwrap()), [a]);
    // Repeated headers are merged (not cached), and no header activates nothing.
    let n = negotiate(&set, &[b, a, b]).unwrap();
    assert_eq!(&*n.requested, [b, a]);
    assert_eq!(uris(&n), [a, b]);
    assert!(set.begin::<str>([]).unwrap().is_none());
    assert!(uris(&negotiate(&set, &[]).unwrap()).is_empty());
    assert_eq!(
        set.metrics()
            .iter()
            .map(|m| m.activations)
            .collect::<Vec<_>>(),
        [4, 3]
    );
}

#[test]
fn clients_taking_turns_keep_their_plans_and_an_evicted_plan_loses_no_count() {
    let set = set_of(vec![A {}.__into_dyn(), B {}.__into_dyn()]);
    let (a, both) = (A::URI.to_owned(), format!("{}, {}", A::URI, B::URI));
    let first_a = set.begin([a.as_str()]).unwrap().unwrap();
    let first_both = set.begin([both.as_str()]).unwrap().unwrap();
    for _ in 0..3 {
        let again_a = set.begin([a.as_str()]).unwrap().unwrap();
        let again_both = set.begin([both.as_str()]).unwrap().unwrap();
        assert!(Arc::ptr_eq(&again_a, &first_a), "A's plan was kept");
        assert!(
            Arc::ptr_eq(&again_both, &first_both),
            "A, B's plan was kept"
        );
    }
    // More distinct values than are kept (the same list, spaced differently): the least
    // recently used goes, and the requests counted on its plan stay counted.
    let values: Vec<String> = (0..RECENT_VALUES)
        .map(|i| format!("{}{}", A::URI, " ".repeat(i + 1)))
        .collect();
    for v in &values {
        negotiate(&set, &[v]).unwrap();
        negotiate(&set, &[v]).unwrap();
    }
    let again_a = set.begin([a.as_str()]).unwrap().unwrap();
    assert!(!Arc::ptr_eq(&again_a, &first_a), "evicted, planned anew");
    let last = values.last().unwrap().as_str();
    let kept = set.begin([last]).unwrap().unwrap();
    assert!(Arc::ptr_eq(&kept, &set.begin([last]).unwrap().unwrap()));
    let activations: Vec<u64> = set.metrics().iter().map(|m| m.activations).collect();
    assert_eq!(activations, [2 * RECENT_VALUES as u64, 0]);
}

#[test]
fn a_cached_value_does_not_excuse_a_missing_required_extension() {
    let set = set_of(vec![R {}.__into_dyn(), A {}.__into_dyn()]);
    let with_r = format!("{}, {}", A::URI, R::URI);
    assert_eq!(
        uris(&negotiate(&set, &[&with_r]).unwrap()),
        [R::URI, A::URI]
    );
    for values in [&[A::URI][..], &[], &[" "]] {
        match negotiate(&set, values) {
            Err(A2aError::ExtensionSupportRequired { uris }) => assert_eq!(uris, [R::URI]),
            other => panic!("{values:?}: {other:?}"),
        }
    }
    assert_eq!(
        uris(&negotiate(&set, &[&with_r]).unwrap()),
        [R::URI, A::URI]
    );
}

#[test]
fn every_hook_of_an_extension_with_hooks_is_called_and_none_of_a_data_only_one() {
    let set = set_of(vec![Counted {}.__into_dyn(), A {}.__into_dyn()]);
    let entries = &set.inner.entries;
    assert_eq!(entries[0].ext.hooks(), HOOK_ALL);
    assert_eq!(entries[1].ext.hooks(), 0, "data only");
    let ctx = RequestContext::v1();
    let mut req = A2aRequest::GetTask(Default::default());
    let mut event = StreamResponse::Task(Default::default());
    let mut task = crate::types::Task::default();
    let before = COUNTED_REQUESTS.load(Ordering::SeqCst);
    for round in 1..=3 {
        let n = negotiate(&set, &[Counted::URI]).unwrap();
        // Defaults are called too: Rust cannot tell them from overrides.
        assert_eq!(n.hooks, HOOK_ALL, "round {round}");
        n.handle_request(&mut req, &ctx).unwrap();
        n.handle_event(&mut event).unwrap();
        n.handle_response(&mut Reply::Task(&mut task), &req, &ctx)
            .unwrap();
        assert_eq!(n.extension::<Counted>(), Some(1), "round {round}");
    }
    assert_eq!(COUNTED_REQUESTS.load(Ordering::SeqCst) - before, 3);
    assert_eq!(entries[0].ext.hooks(), HOOK_ALL);
}

/// Counts its response hook calls in its activation value.
#[crate::a2a_extension(uri = "https://example.com/test/replies/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Replies {}

impl crate::extension::ExtensionHooks for Replies {
    type Activation = u32;

    fn handle_response(
        &self,
        _: &mut Reply<'_>,
        seen: &mut u32,
        _: &crate::protocol::A2aRequest,
        _: &crate::extension::RequestContext,
    ) -> Result<(), A2aError> {
        *seen += 1;
        Ok(())
    }
}

/// Records the id of every task it observes in its activation value.
#[crate::a2a_extension(uri = "https://example.com/test/observer/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Observer {}

impl crate::extension::ExtensionHooks for Observer {
    type Activation = String;

    fn observe_response(
        &self,
        reply: &Reply<'_>,
        seen: &mut String,
        _: &crate::protocol::A2aRequest,
        _: &crate::extension::RequestContext,
    ) -> Result<(), A2aError> {
        if let Reply::Task(task) = reply {
            seen.push_str(task.id.as_str());
        }
        Ok(())
    }
}

/// Renames every task it is given.
#[crate::a2a_extension(uri = "https://example.com/test/renamer/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Renamer {}

impl crate::extension::ExtensionHooks for Renamer {
    type Activation = ();

    fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        _: &mut (),
        _: &crate::protocol::A2aRequest,
        _: &crate::extension::RequestContext,
    ) -> Result<(), A2aError> {
        if let Reply::Task(task) = reply {
            task.id = format!("renamed-{}", task.id.as_str()).into();
        }
        Ok(())
    }
}

/// Skips its activation for the tenant `skip`; its value is a string.
#[crate::a2a_extension(uri = "https://example.com/test/skipper/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Skipper {}

impl crate::extension::ExtensionHooks for Skipper {
    type Activation = String;

    fn activate(&self, _: &[String], ctx: &RequestContext) -> Activate<String> {
        if ctx.tenant == "skip" {
            Activate::Skip
        } else {
            Activate::Activated("on".into())
        }
    }
}

/// In its request hook, records what the context shows of `Counted`'s value.
#[crate::a2a_extension(uri = "https://example.com/test/peeker/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Peeker {}

impl crate::extension::ExtensionHooks for Peeker {
    type Activation = Option<Option<u32>>;

    fn handle_request(
        &self,
        _: &mut A2aRequest,
        seen: &mut Option<Option<u32>>,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        *seen = Some(ctx.extension::<Counted>());
        Ok(())
    }
}

/// Its request hook panics.
#[crate::a2a_extension(uri = "https://example.com/test/panicker/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Panicker {}

impl crate::extension::ExtensionHooks for Panicker {
    type Activation = u32;

    fn activate(&self, _: &[String], _: &RequestContext) -> Activate<u32> {
        Activate::Activated(7)
    }

    fn handle_request(
        &self,
        _: &mut A2aRequest,
        _: &mut u32,
        _: &RequestContext,
    ) -> Result<(), A2aError> {
        panic!("a request hook that panics");
    }
}

#[test]
fn values_are_readable_again_after_a_request_hook_panicked() {
    let set = set_of(vec![Peeker {}.__into_dyn(), Panicker {}.__into_dyn()]);
    let both = format!("{}, {}", Peeker::URI, Panicker::URI);
    let begun = set.begin([both.as_str()]).unwrap().unwrap();
    let mut ctx = RequestContext::v1();
    let n = set.activate_begun(&begun, &ctx).unwrap();
    ctx.extensions = n.clone();
    let mut req = A2aRequest::GetTask(Default::default());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        n.handle_request(&mut req, &ctx)
    }));
    assert!(panicked.is_err());
    // Not stuck in "the request hooks are running", and the poisoned table is still read.
    assert_eq!(n.extension::<Panicker>(), Some(7));
    assert_eq!(n.extension::<Peeker>(), Some(Some(None)));
}

#[test]
fn values_stay_with_their_extension_when_one_is_skipped_and_request_hooks_do_not_wait_for_themselves()
 {
    let set = set_of(vec![
        Counted {}.__into_dyn(),
        Skipper {}.__into_dyn(),
        Peeker {}.__into_dyn(),
    ]);
    let all = format!("{}, {}, {}", Peeker::URI, Skipper::URI, Counted::URI);
    let mut req = A2aRequest::GetTask(Default::default());
    for tenant in ["", "skip", ""] {
        let mut ctx = RequestContext::v1();
        ctx.tenant = tenant.into();
        let begun = set.begin([all.as_str()]).unwrap().unwrap();
        let n = set.activate_begun(&begun, &ctx).unwrap();
        // The hooks get a context holding this very negotiation.
        ctx.extensions = n.clone();
        n.handle_request(&mut req, &ctx).unwrap();
        let expected = if tenant == "skip" {
            vec![Counted::URI, Peeker::URI]
        } else {
            vec![Counted::URI, Skipper::URI, Peeker::URI]
        };
        assert_eq!(uris(&n), expected, "tenant {tenant:?}");
        assert_eq!(n.extension::<Counted>(), Some(1));
        assert_eq!(
            n.extension::<Skipper>(),
            (tenant != "skip").then(|| "on".to_owned())
        );
        // Inside the request hooks the hooks hold the table: None, not a deadlock.
        assert_eq!(n.extension::<Peeker>(), Some(Some(None)));
    }
    // Requests that activate all they asked for share one list; a skip gets its own.
    let lists: Vec<Arc<[Activation]>> = ["", "skip", ""]
        .into_iter()
        .map(|tenant| {
            let mut ctx = RequestContext::v1();
            ctx.tenant = tenant.into();
            let begun = set.begin([all.as_str()]).unwrap().unwrap();
            set.activate_begun(&begun, &ctx).unwrap().activated.clone()
        })
        .collect();
    assert!(Arc::ptr_eq(&lists[0], &lists[2]));
    assert!(!Arc::ptr_eq(&lists[0], &lists[1]));
    // Activations and skips are counted per extension, whatever the cache holds.
    let counts = |set: &ExtensionSet| -> Vec<(u64, u64)> {
        set.metrics()
            .iter()
            .map(|m| (m.activations, m.skips))
            .collect()
    };
    assert_eq!(counts(&set), [(6, 0), (4, 2), (6, 0)]);
    // A new header value is cached beside it: the counts add up across cached plans.
    negotiate(&set, &[Counted::URI]).unwrap();
    assert_eq!(counts(&set), [(7, 0), (4, 2), (6, 0)]);
}

/// Its response hook fails.
#[crate::a2a_extension(uri = "https://example.com/test/failing/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Failing {}

impl crate::extension::ExtensionHooks for Failing {
    type Activation = ();

    fn handle_response(
        &self,
        _: &mut Reply<'_>,
        _: &mut (),
        _: &crate::protocol::A2aRequest,
        _: &crate::extension::RequestContext,
    ) -> Result<(), A2aError> {
        Err(A2aError::invalid_field(
            "reply",
            "refused by the failing extension",
        ))
    }
}

#[test]
fn a_hook_error_stops_the_phase_and_is_counted_on_its_extension() {
    let set = set_of(vec![Failing {}.__into_dyn(), Replies {}.__into_dyn()]);
    let mut task = crate::types::Task::default();
    let n = negotiate(&set, &[Failing::URI, Replies::URI]).unwrap();
    let (req, ctx) = answering();
    let err = n
        .handle_response(&mut Reply::Task(&mut task), &req, &ctx)
        .unwrap_err();
    assert!(
        err.to_string().contains("refused by the failing extension"),
        "{err}"
    );
    // The hooks after the failing one did not run.
    assert_eq!(n.extension::<Replies>(), Some(0));
    let errors: Vec<u64> = set.metrics().iter().map(|m| m.hook_errors).collect();
    assert_eq!(errors, [1, 0]);
}

#[test]
fn response_hooks_change_the_activation_value_of_each_call() {
    let set = set_of(vec![Replies {}.__into_dyn(), Counted {}.__into_dyn()]);
    let mut task = crate::types::Task::default();
    let n = negotiate(&set, &[Replies::URI, Counted::URI]).unwrap();
    let (req, ctx) = answering();
    for _ in 0..3 {
        n.handle_response(&mut Reply::Task(&mut task), &req, &ctx)
            .unwrap();
    }
    assert_eq!(n.extension::<Replies>(), Some(3));
    // Counted leaves handle_response at its default: called, its value untouched.
    assert_eq!(n.extension::<Counted>(), Some(0));
}

#[test]
fn observers_see_the_result_after_every_response_hook() {
    // The observer is declared first, yet sees what the renamer made of the task.
    let set = set_of(vec![Observer {}.__into_dyn(), Renamer {}.__into_dyn()]);
    let n = negotiate(&set, &[Observer::URI, Renamer::URI]).unwrap();
    assert!(n.hooks_responses() && n.sees_responses());
    let mut task = crate::types::Task {
        id: "t".into(),
        ..Default::default()
    };
    let (req, ctx) = answering();
    n.handle_response(&mut Reply::Task(&mut task), &req, &ctx)
        .unwrap();
    assert_eq!(task.id, "renamed-t");
    task.id = "u".into();
    n.handle_response(&mut Reply::Task(&mut task), &req, &ctx)
        .unwrap();
    assert_eq!(
        n.extension::<Observer>().as_deref(),
        Some("renamed-trenamed-u")
    );
    // Rust cannot tell the observer's default `handle_response` from an override: it is
    // called, and a result it sees is encoded after the hooks.
    let only = negotiate(&set, &[Observer::URI]).unwrap();
    assert!(only.sees_responses());
    assert!(only.hooks_responses());
}

/// A request and its context, for calling the response hooks.
fn answering() -> (A2aRequest, RequestContext) {
    let req = A2aRequest::GetTask(crate::types::GetTaskRequest::default());
    (req, RequestContext::v1())
}

#[test]
fn an_extension_of_the_extended_card_is_activated_for_authenticated_callers_only() {
    let mut config = ExtensionConfig::new();
    config.linked = false;
    config.add(A {});
    config.add(R {});
    config.set_extended_only::<A>();
    config.set_extended_only::<R>();
    let set = config.resolve().unwrap();
    assert!(set.is_extended_card_only(A::URI));
    let begun = set.begin([format!("{}, {}", A::URI, R::URI).as_str()]);
    let begun = begun.unwrap().unwrap();
    let alice = RequestContext {
        principal: crate::protocol::Principal::authenticated("alice"),
        ..RequestContext::v1()
    };
    let n = set.activate_begun(&begun, &alice).unwrap();
    assert_eq!(uris(&n), [A::URI, R::URI]);
    // Anonymous: the optional one would be skipped, the required one refuses the request.
    let err = set
        .activate_begun(&begun, &RequestContext::v1())
        .unwrap_err();
    assert!(matches!(err, A2aError::PermissionDenied(_)), "{err:?}");
    let only_a = set.begin([A::URI]);
    assert!(only_a.is_err(), "R is required");
    let metrics = set.metrics();
    assert_eq!((metrics[0].activations, metrics[0].denials), (1, 1));
    assert_eq!((metrics[1].activations, metrics[1].denials), (1, 1));
}

#[test]
fn an_optional_extension_of_the_extended_card_is_skipped_for_anonymous_callers() {
    let mut config = ExtensionConfig::new();
    config.linked = false;
    config.add(A {});
    config.set_extended_only::<A>();
    let set = config.resolve().unwrap();
    let begun = set.begin([A::URI]).unwrap().unwrap();
    let n = set.activate_begun(&begun, &RequestContext::v1()).unwrap();
    assert!(uris(&n).is_empty());
    let alice = RequestContext {
        principal: crate::protocol::Principal::authenticated("alice"),
        ..RequestContext::v1()
    };
    assert_eq!(uris(&set.activate_begun(&begun, &alice).unwrap()), [A::URI]);
}

/// Required, data-only, and not allowed to be.
#[crate::a2a_extension(uri = "https://example.com/test/required-data/v1", required = true)]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct RequiredData {}

#[test]
fn a_required_data_only_extension_needs_the_authors_permission_on_a_server() {
    let mut config = ExtensionConfig::new();
    config.linked = false;
    config.add(RequiredData {});
    let err = config.resolve().unwrap_err();
    assert!(
        matches!(&err, super::RegistryError::RequiredDataOnly { uri, .. } if uri == RequiredData::URI),
        "{err}"
    );
    assert!(
        err.to_string().contains("allow_required_data_only"),
        "{err}"
    );
    // `R` says `allow_required_data_only = true`.
    assert!(set_of(vec![R {}.__into_dyn()]).uris().eq([R::URI]));
    // A client only names it.
    let mut client = ExtensionConfig::default();
    client.add(RequiredData {});
    assert!(client.resolve().is_ok());
}
