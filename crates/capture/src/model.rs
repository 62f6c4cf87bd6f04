//! The touched part of a user's catalog, as plain data: what [`crate::catalog`] reads (by
//! OID, only the touched relations) and what [`crate::schema_sql`] and [`crate::datagen`]
//! write SQL from, so both are pure functions tested without a server.

use serde::{Deserialize, Serialize};

/// How a value of a column is generated and redacted, from its type (after domains).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    Bool,
    /// `int2`, `int4`, `int8` (and `oid`): the most and least value.
    Int {
        min: i128,
        max: i128,
    },
    /// `numeric`, `float4`, `float8`, `money`-less decimals.
    Decimal,
    /// `text`, `varchar`, `char`, `name`, `citext`-like strings.
    Text,
    Uuid,
    Date,
    Timestamp,
    TimestampTz,
    Json,
    Bytea,
    /// An enum's labels in their order.
    Enum {
        labels: Vec<String>,
    },
    /// An array of values of the element kind.
    Array(Box<ValueKind>),
    /// Anything else: values come only from the statistics (literally), never made up.
    Other,
}

impl ValueKind {
    /// The kind of a built-in base type by OID (after domains); enums and arrays are
    /// recognised by the catalog reader.
    pub fn of_builtin(oid: u32) -> ValueKind {
        match oid {
            16 => ValueKind::Bool,
            21 => ValueKind::Int {
                min: i16::MIN as i128,
                max: i16::MAX as i128,
            },
            23 => ValueKind::Int {
                min: i32::MIN as i128,
                max: i32::MAX as i128,
            },
            20 => ValueKind::Int {
                min: i64::MIN as i128,
                max: i64::MAX as i128,
            },
            26 => ValueKind::Int {
                min: 0,
                max: u32::MAX as i128,
            },
            700 | 701 | 1700 => ValueKind::Decimal,
            18 | 19 | 25 | 1042 | 1043 => ValueKind::Text,
            2950 => ValueKind::Uuid,
            1082 => ValueKind::Date,
            1114 => ValueKind::Timestamp,
            1184 => ValueKind::TimestampTz,
            114 | 3802 => ValueKind::Json,
            17 => ValueKind::Bytea,
            _ => ValueKind::Other,
        }
    }

    /// Values can be placed between two others (numbers and times).
    pub fn interpolates(&self) -> bool {
        matches!(
            self,
            ValueKind::Int { .. }
                | ValueKind::Decimal
                | ValueKind::Date
                | ValueKind::Timestamp
                | ValueKind::TimestampTz
        )
    }
}

/// One column of a touched relation.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub num: i16,
    pub name: String,
    /// `format_type(atttypid, atttypmod)`: schema-qualified where needed, quoted.
    pub type_sql: String,
    pub type_oid: u32,
    pub kind: ValueKind,
    pub not_null: bool,
    /// `pg_get_expr` of the default.
    pub default: Option<String>,
    /// `a` (always) or `d` (by default) for an identity column.
    pub identity: Option<char>,
    /// The expression of a stored generated column (never inserted into).
    pub generated: Option<String>,
    /// `COLLATE "c"` when the column has a collation other than its type's default.
    pub collation: Option<String>,
    /// Defined by this relation (not only inherited from a partitioned parent).
    pub local: bool,
    /// The server's own output function can print its values (a built-in type, an enum or
    /// a domain or array of those): only then are its statistics read.
    pub readable: bool,
}

/// A constraint as `pg_get_constraintdef` writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub name: String,
    /// `p`, `u`, `f`, `c`, `x`, `t`, `n`.
    pub kind: char,
    pub def: String,
    /// Column numbers it covers (`conkey`).
    pub columns: Vec<i16>,
    /// For a foreign key: the referenced relation and its columns.
    pub references: Option<(u32, Vec<i16>)>,
    /// Inherited from a parent (a partition's copy of its parent's constraint).
    pub inherited: bool,
}

/// An index that backs no constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub name: String,
    /// `pg_get_indexdef`.
    pub def: String,
    /// A partition's index attached to its parent's (created with it).
    pub inherited: bool,
    /// The columns of a unique index on plain columns without a predicate.
    pub unique_columns: Option<Vec<i16>>,
}

/// What kind of relation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelKind {
    #[default]
    Table,
    Partitioned,
    View,
    Other,
}

/// A touched relation (a table named by a statement, a parent its foreign keys reference,
/// a partition of a partitioned one).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Relation {
    pub oid: u32,
    pub schema: String,
    pub name: String,
    pub kind: RelKind,
    pub reltuples: f64,
    /// `pg_stat_user_tables.n_live_tup`, for a table never vacuumed or analyzed.
    pub live_tuples: Option<f64>,
    /// `n_tup_ins - n_tup_del`: rows inserted and not deleted since the statistics were
    /// reset, for a table never analyzed whose live count reads low.
    pub inserted_tuples: Option<f64>,
    pub unlogged: bool,
    /// `pg_get_partkeydef` of a partitioned table.
    pub partition_key: Option<String>,
    /// The parent and `pg_get_expr(relpartbound)` of a partition.
    pub partition_of: Option<(u32, String)>,
    /// `pg_get_partition_constraintdef` of a partition: the rows it may hold.
    pub partition_constraint: Option<String>,
    /// `reloptions` (`fillfactor=70`).
    pub options: Vec<String>,
    /// `pg_get_viewdef` of a view.
    pub view_def: Option<String>,
    pub columns: Vec<Column>,
    pub constraints: Vec<Constraint>,
    pub indexes: Vec<Index>,
}

impl Relation {
    /// `"schema"."name"`.
    pub fn qualified(&self) -> String {
        crate::sqltext::qualified(&self.schema, &self.name)
    }

    /// `schema.name` as people read it (not SQL).
    pub fn display(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }

    pub fn column(&self, num: i16) -> Option<&Column> {
        self.columns.iter().find(|c| c.num == num)
    }

    /// The columns of its primary key (first) and of each unique constraint and unique
    /// index, each set once.
    pub fn unique_sets(&self) -> Vec<Vec<i16>> {
        let mut out: Vec<Vec<i16>> = Vec::new();
        let pk = self.constraints.iter().filter(|c| c.kind == 'p');
        let uq = self.constraints.iter().filter(|c| c.kind == 'u');
        for set in pk
            .chain(uq)
            .map(|c| c.columns.clone())
            .chain(self.indexes.iter().filter_map(|i| i.unique_columns.clone()))
        {
            if !set.is_empty() && !out.contains(&set) {
                out.push(set);
            }
        }
        out
    }
}

/// A user-defined type a touched column uses.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeDef {
    Enum {
        name: String,
        labels: Vec<String>,
    },
    Domain {
        name: String,
        base_sql: String,
        not_null: bool,
        default: Option<String>,
        checks: Vec<String>,
    },
    Composite {
        name: String,
        fields: Vec<(String, String)>,
    },
}

impl TypeDef {
    pub fn name(&self) -> &str {
        match self {
            TypeDef::Enum { name, .. }
            | TypeDef::Domain { name, .. }
            | TypeDef::Composite { name, .. } => name,
        }
    }
}

/// A sequence a touched column draws from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    pub oid: u32,
    pub schema: String,
    pub name: String,
    pub type_sql: String,
    pub start: String,
    pub increment: String,
    pub min: String,
    pub max: String,
    pub cache: String,
    pub cycle: bool,
    /// Owned by this table column (serial, identity): `ALTER SEQUENCE … OWNED BY`.
    pub owned_by: Option<(u32, i16)>,
    /// An identity column's own sequence (created with the column).
    pub identity: bool,
    /// Not owned, but the statements insert its values into this column: moved past its
    /// largest value as an owned one is.
    pub feeds: Option<(u32, i16)>,
}

/// The touched catalog.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Model {
    /// Parents before children (partitioned tables before partitions).
    pub relations: Vec<Relation>,
    /// Dependencies first (a domain over an enum after the enum).
    pub types: Vec<TypeDef>,
    pub sequences: Vec<Sequence>,
    /// `pg_get_functiondef` of the functions asked for and those defaults, checks and
    /// indexes use.
    pub functions: Vec<(String, String)>,
    /// Functions whose signature names a table's row type (`RETURNS jobs`): written after
    /// the tables.
    pub late_functions: Vec<(String, String)>,
    /// `pg_get_functiondef` of the touched tables' SQL and PL/pgSQL trigger functions:
    /// not reproduced, read for what they run ([`crate::nested`]).
    pub trigger_functions: Vec<String>,
    /// `CREATE EXTENSION` a type or function comes from.
    pub extensions: Vec<String>,
    /// Schemas to create (other than `public`).
    pub schemas: Vec<String>,
    /// What cannot be reproduced, and why.
    pub unreproducible: Vec<String>,
    /// The server's `server_version_num`.
    pub server_version_num: u32,
    /// Relations another session held a lock on that reading them needed (left out).
    pub locked: std::collections::BTreeSet<u32>,
    /// Why `pg_dump`'s output would not do (a column written with another type).
    pub catalogs_only: Option<String>,
}

impl Model {
    pub fn relation(&self, oid: u32) -> Option<&Relation> {
        self.relations.iter().find(|r| r.oid == oid)
    }
}
