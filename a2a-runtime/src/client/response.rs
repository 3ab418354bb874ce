//! [`Response`]: a call's result with what the server said about the call in its headers.

/// A call's result, with the protocol version and the extensions the server reported in its
/// headers.
///
/// ```no_run
/// # async fn run(client: a2a_runtime::client::A2aClient) -> Result<(), a2a_runtime::client::ClientError> {
/// let response = client.get_task("t-1", None).await?;
/// println!("served as A2A {:?}", response.protocol_version());
/// println!("extensions activated: {:?}", response.activated_extensions());
/// let task = response.into_inner();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Response<T> {
    body: T,
    protocol_version: Option<String>,
    extensions: Vec<String>,
}

impl<T> Response<T> {
    pub(crate) fn new(body: T, meta: Meta) -> Self {
        Self {
            body,
            protocol_version: meta.version,
            extensions: meta.extensions,
        }
    }

    /// The result.
    pub fn get_ref(&self) -> &T {
        &self.body
    }

    /// The result, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.body
    }

    /// The result, without the headers.
    pub fn into_inner(self) -> T {
        self.body
    }

    /// The server's `A2A-Version` header, when it sent one.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// The URIs of the extensions the server activated for the call (its `A2A-Extensions`
    /// header, single or repeated), in the server's order.
    pub fn activated_extensions(&self) -> &[String] {
        &self.extensions
    }

    /// True when the server activated extension `E` for the call.
    ///
    /// ```no_run
    /// use a2a_runtime::extension::TimestampExtension;
    /// # async fn run(client: a2a_runtime::client::A2aClient) -> Result<(), a2a_runtime::client::ClientError> {
    /// let response = client.get_task("t-1", None).await?;
    /// if response.is_activated::<TimestampExtension>() {
    ///     println!("the agent stamped its answer");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_activated<E: crate::extension::Extension>(&self) -> bool {
        self.extensions.iter().any(|u| u == E::URI)
    }

    /// Extension `E` (its default value) when the server activated it for the call: typed
    /// access to what [`activated_extensions`](Self::activated_extensions) lists by URI.
    pub fn activated<E: crate::extension::Extension + Default>(&self) -> Option<E> {
        self.is_activated::<E>().then(E::default)
    }

    /// The same headers with the result changed by `f`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Response<U> {
        Response {
            body: f(self.body),
            protocol_version: self.protocol_version,
            extensions: self.extensions,
        }
    }
}

/// What the server said in its headers.
#[derive(Debug, Default)]
pub(crate) struct Meta {
    pub(crate) version: Option<String>,
    pub(crate) extensions: Vec<String>,
}
