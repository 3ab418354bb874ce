//! The per-request negotiation: which of the configured extensions a request activates.
//!
//! `begin` reads the `A2A-Extensions` values and checks the required extensions before anything
//! else runs; `activate_begun` asks each requested, configured extension to activate, in
//! declaration order, once the request is known to be valid.
// The server negotiates and serves what a client only declares: without the `server` feature
// the serving half is unused.
#![cfg_attr(not(feature = "server"), allow(dead_code))]

// Each client of an agent tends to send the same `A2A-Extensions` value on every request: the
// outcome of parsing a single value (the requested list, the plan of what to activate) is
// cached per value, the last `RECENT_VALUES` of them, so that a few kinds of client taking
// turns keep theirs (criterion `negotiation/10`, two clients taking turns: 1.89 -> 0.57 us per
// request, c96e8b8).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::RequestContext;
use super::header::parse_extensions_header;
use super::negotiated::{Activation, ActivationPlan, Negotiated, in_span_if, spans_wanted};
use super::set::{ExtensionSet, RECENT_VALUES};
use crate::error::A2aError;

impl ExtensionSet {
    /// Reads the `A2A-Extensions` header values (`values`: every value of `A2A-Extensions`,
    /// then of `X-A2A-Extensions`, as received) and checks the required extensions: the
    /// negotiation's start, with nothing activated yet (`None` when no value was sent; a value
    /// that is not UTF-8 counts as not sent). The outcome for a single value is cached and
    /// shared by the next requests that send the same value.
    pub(crate) fn begin<'a, V: AsRef<[u8]> + ?Sized + 'a>(
        &self,
        values: impl IntoIterator<Item = &'a V>,
    ) -> Result<Option<Arc<Negotiated>>, A2aError> {
        let mut values = values.into_iter().map(AsRef::as_ref);
        let Some(first) = values.next() else {
            return self.begin_none();
        };
        let Some(second) = values.next() else {
            return self.begin_value(first);
        };
        let texts: Vec<&str> = [first, second]
            .into_iter()
            .chain(values)
            .filter_map(|v| std::str::from_utf8(v).ok())
            .collect();
        if texts.is_empty() {
            return self.begin_none();
        }
        self.begun(parse_extensions_header(texts)?).map(Some)
    }

    /// [`begin`](Self::begin) when no value was sent.
    fn begin_none(&self) -> Result<Option<Arc<Negotiated>>, A2aError> {
        self.check_required(&[])?;
        Ok(None)
    }

    /// [`begin`](Self::begin) for a single header value, through the cache of recent values
    /// (compared as received: a value is checked to be UTF-8 once, when it is first planned).
    fn begin_value(&self, value: &[u8]) -> Result<Option<Arc<Negotiated>>, A2aError> {
        let lock = || {
            self.inner
                .recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        {
            let mut recent = lock();
            // The usual request: the same value as the last one, first in the list.
            if let Some(i) = recent.iter().position(|(raw, _)| **raw == *value) {
                if i > 0
                    && let Some(used) = recent.get_mut(..=i)
                {
                    used.rotate_right(1);
                }
                if let Some((_, begun)) = recent.first() {
                    return Ok(Some(begun.clone()));
                }
            }
        }
        let Ok(text) = std::str::from_utf8(value) else {
            return self.begin_none();
        };
        let begun = self.begun(parse_extensions_header([text])?)?;
        let mut recent = lock();
        // Planned by another request meanwhile: that one is kept (and this one's plan goes
        // unused).
        if let Some((_, theirs)) = recent.iter().find(|(raw, _)| **raw == *value) {
            return Ok(Some(theirs.clone()));
        }
        if recent.len() >= RECENT_VALUES {
            recent.pop();
        }
        recent.insert(0, (value.into(), begun.clone()));
        Ok(Some(begun))
    }

    /// Checks the required extensions and plans the activation of `requested`.
    fn begun(&self, requested: Vec<String>) -> Result<Arc<Negotiated>, A2aError> {
        self.check_required(&requested)?;
        let plan = self.plan(&requested);
        Ok(Arc::new(Negotiated {
            requested: requested.into(),
            activated: Arc::default(),
            values: Mutex::default(),
            requesting: AtomicBool::new(false),
            hooks: 0,
            spans: false,
            plan: Some(Arc::new(plan)),
        }))
    }

    /// The requested, configured extensions in declaration order, with the first required
    /// dependency each lacks.
    fn plan(&self, requested: &[String]) -> ActivationPlan {
        let mut positions: Vec<usize> = requested
            .iter()
            .filter_map(|r| self.inner.index.get(r.as_str()).copied())
            .collect();
        positions.sort_unstable();
        positions.dedup();
        let steps: Vec<(usize, Option<&'static str>)> = positions
            .into_iter()
            .map(|i| {
                let missing = self.inner.entries.get(i).and_then(|e| {
                    e.dependencies
                        .required
                        .iter()
                        .find(|d| !requested.iter().any(|r| r == **d))
                        .copied()
                });
                (i, missing)
            })
            .collect();
        let all = steps
            .iter()
            .filter_map(|&(index, _)| Some(Activation(self.inner.entries.get(index)?.clone())))
            .collect();
        ActivationPlan { steps, all }
    }

    /// Activates, in declaration order, every configured extension the request named. An
    /// extension whose required dependency was not requested refuses the request, naming both.
    pub fn activate(
        &self,
        requested: Vec<String>,
        ctx: &RequestContext,
    ) -> Result<Negotiated, A2aError> {
        let plan = self.plan(&requested);
        self.activate_each(requested.into(), &plan, ctx, spans_wanted())
    }

    /// Activates what `begun` (from [`begin`](Self::begin), or built by hand) requested.
    pub(crate) fn activate_begun(
        &self,
        begun: &Negotiated,
        ctx: &RequestContext,
    ) -> Result<Arc<Negotiated>, A2aError> {
        let spans = spans_wanted();
        let negotiated = match &begun.plan {
            Some(plan) => self.activate_each(begun.requested.clone(), plan, ctx, spans),
            None => {
                let plan = self.plan(&begun.requested);
                self.activate_each(begun.requested.clone(), &plan, ctx, spans)
            }
        };
        negotiated.map(Arc::new)
    }

    /// Activates the steps of `plan` in order: each extension's `activate` decides.
    fn activate_each(
        &self,
        requested: Arc<[String]>,
        plan: &ActivationPlan,
        ctx: &RequestContext,
        spans: bool,
    ) -> Result<Negotiated, A2aError> {
        let mut values = Vec::with_capacity(plan.steps.len());
        // Only built once an extension is skipped: otherwise the plan's list is shared.
        let mut partial: Option<Vec<Activation>> = None;
        let mut hooks = 0;
        for (step, &(index, missing)) in plan.steps.iter().enumerate() {
            let Some(e) = self.inner.entries.get(index) else {
                continue;
            };
            if let Some(missing) = missing {
                e.counters.refusals.fetch_add(1, Ordering::Relaxed);
                return Err(A2aError::ExtensionDependencyMissing {
                    extension: e.uri.to_owned(),
                    dependency: missing.to_owned(),
                });
            }
            // An extension of the extended card is for the callers who can read that card.
            let admitted = (!e.extended_only || ctx.principal.authenticated)
                && e.policy.as_ref().is_none_or(|p| p.admits(ctx));
            let outcome = if admitted {
                in_span_if(spans, e.uri, "activate", || e.ext.activate(&requested, ctx))
            } else {
                e.counters.denials.fetch_add(1, Ordering::Relaxed);
                if e.ext.required() {
                    return Err(A2aError::PermissionDenied(format!(
                        "extension {} is required and this caller may not activate it",
                        e.uri
                    )));
                }
                Ok(None)
            };
            match outcome {
                Ok(Some(value)) => {
                    e.counters.activations.fetch_add(1, Ordering::Relaxed);
                    hooks |= e.ext.hooks();
                    values.push(value);
                    if let Some(partial) = &mut partial {
                        partial.push(Activation(e.clone()));
                    }
                }
                Ok(None) => {
                    if admitted {
                        e.counters.skips.fetch_add(1, Ordering::Relaxed);
                    }
                    if partial.is_none() {
                        partial = Some(plan.all.get(..step).unwrap_or_default().to_vec());
                    }
                }
                Err(err) => {
                    e.counters.refusals.fetch_add(1, Ordering::Relaxed);
                    return Err(err);
                }
            }
        }
        Ok(Negotiated {
            requested,
            activated: partial.map_or_else(|| plan.all.clone(), Arc::from),
            values: Mutex::new(values),
            requesting: AtomicBool::new(false),
            hooks,
            spans,
            plan: None,
        })
    }
}
