//! What reading a schema can fail with ([`SchemaError`]), shared by every catalog reader
//! (`catalog`, `catalog_types`, `profile`) and `schema`, which calls them; kept apart so the
//! readers need not import their caller. Re-exported from `crate::schema`.

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The session could not be made read-only and bounded; nothing was read.
    #[error("refusing to read the schema: {0}")]
    Unsafe(String),
    /// A catalog read failed (the connection went away, or an unexpected server error).
    #[error("{what}: {source}")]
    Query {
        what: String,
        #[source]
        source: hotbench_wire::Error,
    },
}
