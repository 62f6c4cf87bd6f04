//! The section model: what a report shows, said once and format-neutral. A report is an
//! ordered list of [`Section`]s (a run's is `analysis::sections::RUN`, the other documents'
//! are in `analysis::documents`); a section is built by one function from a record and holds
//! [`Block`]s: the terminal's lines, facts, headline figures, headings, paragraphs, tables,
//! bars and charts. Two renderers walk the same list, each showing the blocks it has a form
//! for:
//!
//! | block | terminal (`text::section`) | HTML (`html::section`) |
//! |---|---|---|
//! | [`Block::Line`] | the line | — (the page shows the section's tables and charts) |
//! | [`Block::Table`] | per its [`TextForm`]: hidden (its section's lines say it) or columns | `<table>` |
//! | [`Block::Facts`], [`Block::Kpis`], [`Block::Heading`], [`Block::Paragraph`], [`Block::Pre`] | — | `<dl>`, figures, `<hN>`, `<p>`, `<pre>` |
//! | [`Block::Bars`], [`Block::Chart`] | — | inline SVG, a uPlot chart |
//!
//! Strings here are the record's own: each renderer escapes them its way (HTML escapes every
//! text and attribute; the terminal prints records already escaped by
//! `hotbench_stats::terminal::escaped`). No markup here.

use crate::analysis::chart::Chart;
use crate::analysis::number::num;

/// One part of a report, in the order the renderers show them.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// Which section (`keys`, `pooler`), for tests and readers of a list.
    pub name: &'static str,
    /// Set apart on the page as an element of its own (a diagnosis' finding).
    pub frame: Option<Frame>,
    pub blocks: Vec<Block>,
}

/// A section the page sets apart: its style class, and the kind of thing it shows (a
/// finding's kind), for styles and tests.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    pub class: &'static str,
    pub kind: Option<String>,
}

#[derive(Debug, Clone)]
pub enum Block {
    /// A line of the terminal report.
    Line(String),
    /// Name → value pairs.
    Facts(Vec<(String, String)>),
    /// Headline figures: value, label.
    Kpis(Vec<(String, String)>),
    Heading {
        level: u8,
        text: String,
    },
    Paragraph(Paragraph),
    /// Preformatted text (a command to copy, or the terminal's output shown on the page),
    /// with a style class, as code or not.
    Pre {
        class: Option<&'static str>,
        code: bool,
        text: String,
    },
    Table(Table),
    Bars(Bars),
    Chart(Chart),
}

/// A paragraph of spans, with a style class (`note`, `muted`) or none.
#[derive(Debug, Clone, Default)]
pub struct Paragraph {
    pub class: Option<&'static str>,
    pub spans: Vec<Span>,
}

/// Rows of cells under a header.
#[derive(Debug, Clone)]
pub struct Table {
    /// Names the table for styles and tests (`hot-keys`).
    pub class: &'static str,
    /// Shown above it (HTML `<h4>`; the terminal `title:`).
    pub title: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub text: TextForm,
}

/// How the terminal shows a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextForm {
    /// Not at all: the section's lines say the same in the terminal's words.
    Hidden,
    /// Its title, then the header and rows in columns (the first left-aligned, the others
    /// right-aligned), indented by two spaces.
    Columns,
}

/// A table cell: spans of text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell(pub Vec<Span>);

/// Text with a style, and a tooltip (`title`) where it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub text: String,
    pub style: Style,
    pub title: Option<String>,
}

/// How a span is set: plain, code, a whole SQL statement, bold, or a style class
/// (`ok`, `bad`, `muted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Code,
    Sql,
    Strong,
    Class(&'static str),
}

/// Horizontal bars, one per item, with an optional labelled line (a ladder's ceiling).
#[derive(Debug, Clone, Default)]
pub struct Bars {
    pub title: String,
    pub unit: String,
    pub bars: Vec<Bar>,
    pub line: Option<(String, f64)>,
}

#[derive(Debug, Clone, Default)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// Text after the value (e.g. `×2.4  checks ✔`).
    pub badge: String,
    pub highlight: bool,
    /// Drawn in the failure colour (a check failed).
    pub bad: bool,
}

impl Section {
    pub fn new(name: &'static str) -> Section {
        Section {
            name,
            frame: None,
            blocks: Vec::new(),
        }
    }

    /// The section set apart on the page (see [`Frame`]).
    pub fn framed(mut self, class: &'static str, kind: Option<String>) -> Section {
        self.frame = Some(Frame { class, kind });
        self
    }

    pub fn push(&mut self, b: Block) {
        self.blocks.push(b);
    }

    /// Adds a line of the terminal report.
    pub fn line(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Line(text.into()));
    }

    pub fn table(&mut self, t: Table) {
        self.blocks.push(Block::Table(t));
    }

    pub fn chart(&mut self, c: Chart) {
        self.blocks.push(Block::Chart(c));
    }

    pub fn heading(&mut self, level: u8, text: impl Into<String>) {
        self.blocks.push(Block::Heading {
            level,
            text: text.into(),
        });
    }

    pub fn paragraph(&mut self, class: Option<&'static str>, spans: Vec<Span>) {
        self.blocks
            .push(Block::Paragraph(Paragraph { class, spans }));
    }

    /// The section's terminal lines so far, as preformatted text for the page (where the
    /// terminal's layout is what the page shows too).
    pub fn lines_as_pre(&mut self) {
        let mut text = String::new();
        for l in self.lines() {
            text.push_str(l);
            text.push('\n');
        }
        self.blocks.push(Block::Pre {
            class: None,
            code: false,
            text,
        });
    }

    /// The terminal's lines, for tests.
    pub fn lines(&self) -> Vec<&str> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Line(l) => Some(l.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tables, for tests and pages that show one.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }
}

impl Table {
    /// A table the terminal does not show, under `header`.
    pub fn new(class: &'static str, header: &[&str], rows: Vec<Vec<Cell>>) -> Table {
        Table {
            class,
            title: None,
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
            text: TextForm::Hidden,
        }
    }

    pub fn titled(mut self, title: impl Into<String>) -> Table {
        self.title = Some(title.into());
        self
    }

    pub fn in_text(mut self, form: TextForm) -> Table {
        self.text = form;
        self
    }
}

impl Span {
    pub fn new(style: Style, text: impl Into<String>) -> Span {
        Span {
            text: text.into(),
            style,
            title: None,
        }
    }

    pub fn plain(text: impl Into<String>) -> Span {
        Span::new(Style::Plain, text)
    }
}

impl Cell {
    pub fn styled(style: Style, text: impl Into<String>) -> Cell {
        Cell(vec![Span::new(style, text)])
    }

    pub fn code(text: impl Into<String>) -> Cell {
        Cell::styled(Style::Code, text)
    }

    pub fn class(class: &'static str, text: impl Into<String>) -> Cell {
        Cell::styled(Style::Class(class), text)
    }

    /// A number as tables show them ([`num`]).
    pub fn num(v: f64) -> Cell {
        Cell::from(num(v))
    }

    /// The cell with `title` as its tooltip (on its last span).
    pub fn titled(mut self, title: impl Into<String>) -> Cell {
        if let Some(s) = self.0.last_mut() {
            s.title = Some(title.into());
        }
        self
    }

    /// The text without styles.
    pub fn text(&self) -> String {
        self.0.iter().map(|s| s.text.as_str()).collect()
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        if text.is_empty() {
            return Cell::default();
        }
        Cell(vec![Span::plain(text)])
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}
