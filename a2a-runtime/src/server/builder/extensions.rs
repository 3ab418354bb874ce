//! The builder's extension settings: which extensions the server offers, how they are
//! configured, who may activate them and what metadata reaches callers.

use super::A2aServerBuilder;
use crate::extension::Extension;

impl A2aServerBuilder {
    /// Enables an extension with this value (its fields are the params published in the card).
    /// Extensions are negotiated in the order they are added; with
    /// [`linked_extensions(true)`](Self::linked_extensions), linked `#[a2a_extension]` types not
    /// added explicitly come after, sorted by URI.
    ///
    /// ```
    /// use a2a_runtime::extension::TimestampExtension;
    /// # use a2a_runtime::server::A2aServer;
    /// # use a2a_runtime::types::AgentCard;
    /// # struct Echo;
    /// # impl a2a_runtime::core::AgentExecutor for Echo {
    /// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
    /// # }
    /// let card = AgentCard { name: "n".into(), description: "d".into(), version: "1".into(), ..Default::default() };
    /// let server = A2aServer::builder().card(card).executor(Echo).linked_extensions(false).extension(TimestampExtension::default()).build().unwrap();
    /// assert_eq!(server.card().capabilities.extensions[0].uri, "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1");
    /// ```
    pub fn extension<E: Extension>(mut self, value: E) -> Self {
        self.extensions.add(value);
        self
    }

    /// Enables an extension with this value, and gives its
    /// [`init`](crate::extension::ExtensionHooks::init) these options (configuration that is
    /// not published on the card: keys, paths, limits). An `init` that fails stops
    /// [`build`](Self::build) with [`RegistryError::Init`](crate::extension::RegistryError::Init) naming the extension.
    ///
    /// ```
    /// use a2a_runtime::extension::TimestampExtension;
    /// # use a2a_runtime::server::A2aServer;
    /// # use a2a_runtime::types::AgentCard;
    /// # struct Echo;
    /// # impl a2a_runtime::core::AgentExecutor for Echo {
    /// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
    /// # }
    /// # let card = AgentCard { name: "n".into(), description: "d".into(), version: "1".into(), ..Default::default() };
    /// // Timestamp takes no options: whatever is given is ignored.
    /// let server = A2aServer::builder()
    ///     .card(card)
    ///     .executor(Echo)
    ///     .extension_with(TimestampExtension::default(), "unused")
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn extension_with<E: Extension, O: std::any::Any + Send + Sync>(
        mut self,
        value: E,
        options: O,
    ) -> Self {
        self.extensions.add(value);
        self.extensions
            .set_options::<E>(crate::extension::ExtensionOptions::new(options));
        self
    }

    /// Sets who may activate extension `E`: checked on every request that asks for it, before
    /// its `activate`. A refused optional extension is skipped; a refused required one refuses
    /// the request with PermissionDenied. See [`ActivationPolicy`](crate::extension::ActivationPolicy).
    ///
    /// ```
    /// use a2a_runtime::extension::{ActivationPolicy, Caller, TimestampExtension};
    /// # use a2a_runtime::server::A2aServer;
    /// let builder = A2aServer::builder()
    ///     .extension(TimestampExtension::default())
    ///     .activation_policy::<TimestampExtension>(
    ///         ActivationPolicy::new().allow(Caller::Tenant("t1".into())),
    ///     );
    /// # let _ = builder;
    /// ```
    pub fn activation_policy<E: Extension>(
        mut self,
        policy: crate::extension::ActivationPolicy,
    ) -> Self {
        self.extensions.set_policy::<E>(policy);
        self
    }

    /// Enables an extension declared on the authenticated extended card only: it is not on the
    /// public card, and it is activated only for authenticated callers (those who can read the
    /// extended card); for others it is skipped, or refused with PermissionDenied when it is
    /// required. Needs [`extended_card`](Self::extended_card) (else the build fails).
    pub fn extension_on_extended_card<E: Extension>(mut self, value: E) -> Self {
        self.extensions.add(value);
        self.extensions.set_extended_only::<E>();
        self
    }

    /// Keeps only the extensions with these URIs.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(mut self, uris: I) -> Self {
        self.extensions.only = Some(uris.into_iter().map(Into::into).collect());
        self
    }

    /// Leaves out the extensions with these URIs.
    pub fn exclude<I: IntoIterator<Item = S>, S: Into<String>>(mut self, uris: I) -> Self {
        self.extensions
            .exclude
            .extend(uris.into_iter().map(Into::into));
        self
    }

    /// Whether `#[a2a_extension]` types linked into the binary (with a `Default`) are enabled
    /// without being added explicitly (default: false). A linked extension declared
    /// `required = true` is never enabled this way, nor are the extensions shipped inside
    /// a2a-runtime: add those with [`extension`](Self::extension). The final list is logged at
    /// INFO when the server is built.
    pub fn linked_extensions(mut self, enabled: bool) -> Self {
        self.extensions.linked = enabled;
        self
    }

    /// Whether responses echo the activated extensions in `A2A-Extensions` (default: true).
    pub fn echo_extensions(mut self, enabled: bool) -> Self {
        self.echo_extensions = enabled;
        self
    }

    /// Which extension metadata answers carry (default: [`MetadataHygiene::Off`], all of it):
    /// with [`MetadataHygiene::Inactive`], a caller gets the metadata of the server's
    /// extensions only when they are active on its request, on every binding and in streamed
    /// events. See [`MetadataHygiene`].
    ///
    /// [`MetadataHygiene`]: crate::extension::MetadataHygiene
    /// [`MetadataHygiene::Off`]: crate::extension::MetadataHygiene::Off
    /// [`MetadataHygiene::Inactive`]: crate::extension::MetadataHygiene::Inactive
    pub fn metadata_hygiene(mut self, mode: crate::extension::MetadataHygiene) -> Self {
        self.metadata_hygiene = mode;
        self
    }
}
