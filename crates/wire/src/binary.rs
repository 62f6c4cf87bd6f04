//! One statement through the extended protocol with its results in binary format: the
//! values as the server's `send` functions wrote them, with each column's type OID, for a
//! caller that must decode values itself instead of asking the server for text (a text
//! result calls each column type's output function, which for a user-defined type is code
//! somebody else wrote; `hotbench diagnose` reads hot rows' keys this way and decodes only
//! built-in types).

use postgres_protocol::message::backend::{DataRowBody, RowDescriptionBody};
use postgres_protocol::message::frontend;

use fallible_iterator::FallibleIterator;

use crate::conn::{Connection, TxStatus};
use crate::encode;
use crate::error::{DbError, Error};
use crate::results::{interpret, row_values, Progress, ResultSink};

/// Rows in binary format with their columns' names and type OIDs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BinaryResult {
    /// Column name and type OID.
    pub columns: Vec<(String, u32)>,
    /// Raw values (`None` = NULL).
    pub rows: Vec<Vec<Option<Vec<u8>>>>,
}

#[derive(Default)]
struct Sink {
    result: BinaryResult,
    error: Option<DbError>,
    fatal: bool,
}

impl ResultSink for Sink {
    fn columns(&mut self, body: &RowDescriptionBody) -> Result<(), Error> {
        let mut fields = body.fields();
        while let Some(f) = fields.next().map_err(|e| Error::Protocol(e.to_string()))? {
            self.result
                .columns
                .push((f.name().to_string(), f.type_oid()));
        }
        Ok(())
    }

    fn row(&mut self, body: &DataRowBody) -> Result<(), Error> {
        let mut row = Vec::with_capacity(self.result.columns.len());
        row_values(body, |_, v| row.push(v.map(<[u8]>::to_vec)))?;
        self.result.rows.push(row);
        Ok(())
    }

    fn error(&mut self, e: DbError) {
        self.fatal |= e.is_fatal();
        if self.error.is_none() {
            self.error = Some(e);
        }
    }
}

impl Connection {
    /// Runs `sql` (unnamed statement and portal: Parse, Bind, Describe, Execute, Sync in one
    /// write) with text parameters of the given types (`param_types`: one OID per `$n`, or
    /// empty to let the server infer them) and every result column in binary format.
    pub fn query_binary(
        &mut self,
        sql: &str,
        param_types: &[u32],
        params: &[Option<&str>],
    ) -> Result<BinaryResult, Error> {
        self.out.clear();
        encode::parse(&mut self.out, "", sql, param_types)?;
        frontend::bind(
            "",
            "",
            std::iter::empty::<i16>(),
            params.iter().copied(),
            |p, buf| match p {
                Some(v) => {
                    buf.extend_from_slice(v.as_bytes());
                    Ok(postgres_protocol::IsNull::No)
                }
                None => Ok(postgres_protocol::IsNull::Yes),
            },
            [1i16],
            &mut self.out,
        )
        .map_err(|e| match e {
            frontend::BindError::Conversion(e) => Error::Usage(e.to_string()),
            frontend::BindError::Serialization(e) => Error::Usage(e.to_string()),
        })?;
        encode::describe_portal(&mut self.out, "")?;
        encode::execute(&mut self.out, "", 0)?;
        encode::sync(&mut self.out);
        self.flush_blocking()?;
        let mut sink = Sink::default();
        loop {
            let msg = match self.read_message_blocking() {
                Ok(m) => m,
                Err(Error::Closed) if sink.error.is_some() => break,
                Err(e) => return Err(e),
            };
            if let Progress::Ready(status) = interpret(&msg, &mut sink)? {
                self.tx_status = TxStatus::from_byte(status);
                break;
            }
        }
        if sink.fatal {
            self.closed = true;
        }
        match sink.error {
            Some(e) => Err(Error::from(e)),
            None => Ok(sink.result),
        }
    }
}
