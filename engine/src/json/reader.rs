//! [`Reader`]: a JSON text walked one token at a time, for readers that keep only part of
//! it (the schedule's) as well as for [`parse`](super::parse).

use super::{Error, MAX_DEPTH, Number, Object, Value};

/// What the next value is, from its first character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// A value that was skipped: a scalar whole, an array or an object with its number of
/// members (theirs left uncounted).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    /// A scalar (never an array or an object).
    Scalar(Value),
    /// An array of this many values.
    Array(u64),
    /// An object of this many keys.
    Object(u64),
}

/// A position in a JSON text, and the means to read on from it.
///
/// Arrays and objects are read member by member: [`Reader::begin`], then
/// [`Reader::next_element`] or [`Reader::next_key`] (then [`Reader::colon`]) before each
/// member, which the caller reads with any of the value methods.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    pos: usize,
    /// Line of the next character, from 1.
    line: usize,
    /// Characters read on this line.
    column: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Reader {
            text,
            pos: 0,
            line: 1,
            column: 0,
        }
    }

    /// The line of the next character and the column of the last one read.
    pub(crate) fn position(&self) -> (usize, usize) {
        (self.line, self.column)
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 0;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn error(&self, reason: &'static str) -> Error {
        Error {
            line: self.line,
            column: self.column,
            reason,
            eof: false,
        }
    }

    /// The error shown by the next character, which is read; at the end of the text, the
    /// text is cut off.
    fn fail<T>(&mut self, reason: &'static str) -> Result<T, Error> {
        match self.bump() {
            Some(_) => Err(self.error(reason)),
            None => Err(self.eof()),
        }
    }

    fn eof(&self) -> Error {
        Error {
            eof: true,
            ..self.error("EOF while parsing")
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(' ' | '\n' | '\t' | '\r') = self.peek() {
            self.bump();
        }
    }

    /// The next non-whitespace character, not read; an error at the end of the text.
    fn next_char(&mut self) -> Result<char, Error> {
        self.skip_whitespace();
        self.peek().ok_or_else(|| self.eof())
    }

    /// What the next value is; an error if no value starts there.
    pub(crate) fn kind(&mut self) -> Result<Kind, Error> {
        Ok(match self.next_char()? {
            'n' => Kind::Null,
            't' | 'f' => Kind::Bool,
            '"' => Kind::String,
            '[' => Kind::Array,
            '{' => Kind::Object,
            '-' | '0'..='9' => Kind::Number,
            _ => return self.fail("expected value"),
        })
    }

    /// Reads the `[` or `{` that opens the next value.
    pub(crate) fn begin(&mut self) -> Result<(), Error> {
        match self.next_char()? {
            '[' | '{' => {
                self.bump();
                Ok(())
            }
            _ => self.fail("expected value"),
        }
    }

    /// Before the next element of an array (`first`: none was read yet): whether there is
    /// one; `false` once the `]` is read.
    pub(crate) fn next_element(&mut self, first: bool) -> Result<bool, Error> {
        self.next_member(first, ']', "expected `,` or `]`")
    }

    /// Before the next key of an object (`first`: none was read yet): the key, read up to
    /// its closing quote; `None` once the `}` is read.
    pub(crate) fn next_key(&mut self, first: bool) -> Result<Option<String>, Error> {
        if !self.next_member(first, '}', "expected `,` or `}`")? {
            return Ok(None);
        }
        match self.next_char()? {
            '"' => self.string().map(Some),
            _ => self.fail("key must be a string"),
        }
    }

    fn next_member(
        &mut self,
        first: bool,
        close: char,
        expected: &'static str,
    ) -> Result<bool, Error> {
        let c = self.next_char()?;
        if c == close {
            self.bump();
            return Ok(false);
        }
        if !first {
            if c != ',' {
                return self.fail(expected);
            }
            self.bump();
            if self.next_char()? == close {
                return self.fail("trailing comma");
            }
        }
        Ok(true)
    }

    /// Reads the `:` after a key.
    pub(crate) fn colon(&mut self) -> Result<(), Error> {
        match self.next_char()? {
            ':' => {
                self.bump();
                Ok(())
            }
            _ => self.fail("expected `:`"),
        }
    }

    /// Reads a string value.
    pub(crate) fn string(&mut self) -> Result<String, Error> {
        if self.next_char()? != '"' {
            return self.fail("expected a string");
        }
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump().ok_or_else(|| self.eof())? {
                '"' => return Ok(out),
                '\\' => out.push(self.escape()?),
                c if c < ' ' => {
                    return Err(self.error(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                    ));
                }
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self) -> Result<char, Error> {
        Ok(match self.bump().ok_or_else(|| self.eof())? {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => return self.unicode_escape(),
            _ => return Err(self.error("invalid escape")),
        })
    }

    /// The character of a `\u` escape (its `\u` read), with the second half of a surrogate
    /// pair.
    fn unicode_escape(&mut self) -> Result<char, Error> {
        let first = self.hex4()?;
        if !(0xD800..0xDC00).contains(&first) {
            return char::from_u32(first)
                .ok_or_else(|| self.error("lone trailing surrogate in hex escape"));
        }
        if self.bump().ok_or_else(|| self.eof())? != '\\'
            || self.bump().ok_or_else(|| self.eof())? != 'u'
        {
            return Err(self.error("unexpected end of hex escape"));
        }
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return Err(self.error("lone leading surrogate in hex escape"));
        }
        let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        char::from_u32(c).ok_or_else(|| self.error("invalid unicode code point"))
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let mut n = 0;
        for _ in 0..4 {
            let c = self.bump().ok_or_else(|| self.eof())?;
            let digit = c.to_digit(16).ok_or_else(|| self.error("invalid escape"))?;
            n = n * 16 + digit;
        }
        Ok(n)
    }

    /// Reads a number.
    pub(crate) fn number(&mut self) -> Result<Number, Error> {
        self.skip_whitespace();
        let start = self.pos;
        if self.peek() == Some('-') {
            self.bump();
        }
        match self.peek() {
            Some('0') => {
                self.bump();
                if let Some('0'..='9') = self.peek() {
                    return self.fail("invalid number");
                }
            }
            Some('1'..='9') => self.digits(),
            _ => return self.fail("invalid number"),
        }
        if self.peek() == Some('.') {
            self.bump();
            self.some_digits()?;
        }
        if let Some('e' | 'E') = self.peek() {
            self.bump();
            if let Some('+' | '-') = self.peek() {
                self.bump();
            }
            self.some_digits()?;
        }
        Ok(Number(self.text[start..self.pos].to_owned()))
    }

    fn digits(&mut self) {
        while let Some('0'..='9') = self.peek() {
            self.bump();
        }
    }

    fn some_digits(&mut self) -> Result<(), Error> {
        match self.peek() {
            Some('0'..='9') => {
                self.digits();
                Ok(())
            }
            _ => self.fail("invalid number"),
        }
    }

    /// Reads `null`, `true` or `false`.
    fn literal(&mut self) -> Result<Value, Error> {
        let (word, value) = match self.next_char()? {
            'n' => ("null", Value::Null),
            't' => ("true", Value::Bool(true)),
            _ => ("false", Value::Bool(false)),
        };
        for expected in word.chars() {
            match self.bump() {
                Some(c) if c == expected => {}
                Some(_) => return Err(self.error("expected ident")),
                None => return Err(self.eof()),
            }
        }
        Ok(value)
    }

    /// Reads a scalar whole; an array or an object is skipped, and counted.
    pub(crate) fn shallow(&mut self) -> Result<Shape, Error> {
        let kind = self.kind()?;
        match kind {
            Kind::Array | Kind::Object => {
                self.begin()?;
                let mut count = 0;
                while self.member(kind, count == 0)? {
                    self.skip()?;
                    count += 1;
                }
                Ok(match kind {
                    Kind::Array => Shape::Array(count),
                    _ => Shape::Object(count),
                })
            }
            _ => self.value(0).map(Shape::Scalar),
        }
    }

    /// Before the next member of an open array or object (`kind`), reading its key and
    /// colon: whether there is one.
    fn member(&mut self, kind: Kind, first: bool) -> Result<bool, Error> {
        match kind {
            Kind::Array => self.next_element(first),
            _ => match self.next_key(first)? {
                Some(_) => self.colon().map(|()| true),
                None => Ok(false),
            },
        }
    }

    /// Skips the next value, without recursion: the open arrays and objects are a stack of
    /// at most [`MAX_DEPTH`].
    pub(crate) fn skip(&mut self) -> Result<(), Error> {
        // For each open array or object: its kind, and whether a member was read.
        let mut open: Vec<(Kind, bool)> = Vec::new();
        loop {
            let kind = self.kind()?;
            match kind {
                Kind::Array | Kind::Object => {
                    if open.len() == MAX_DEPTH {
                        return self.fail("recursion limit exceeded");
                    }
                    self.begin()?;
                    open.push((kind, false));
                }
                Kind::String => drop(self.string()?),
                Kind::Number => drop(self.number()?),
                Kind::Null | Kind::Bool => drop(self.literal()?),
            }
            // Close what ends here, and stop at the next member of what stays open.
            loop {
                let Some((kind, read)) = open.last_mut() else {
                    return Ok(());
                };
                let first = !*read;
                *read = true;
                let kind = *kind;
                if self.member(kind, first)? {
                    break;
                }
                open.pop();
            }
        }
    }

    /// Reads the next value whole, `depth` arrays and objects in.
    pub(crate) fn value(&mut self, depth: usize) -> Result<Value, Error> {
        let kind = self.kind()?;
        match kind {
            Kind::Null | Kind::Bool => self.literal(),
            Kind::Number => self.number().map(Value::Number),
            Kind::String => self.string().map(Value::String),
            Kind::Array | Kind::Object if depth == MAX_DEPTH => {
                self.fail("recursion limit exceeded")
            }
            Kind::Array => {
                self.begin()?;
                let mut values = Vec::new();
                while self.next_element(values.is_empty())? {
                    values.push(self.value(depth + 1)?);
                }
                Ok(Value::Array(values))
            }
            Kind::Object => {
                self.begin()?;
                let mut object = Object::new();
                let mut first = true;
                while let Some(key) = self.next_key(first)? {
                    first = false;
                    self.colon()?;
                    object.insert(key, self.value(depth + 1)?);
                }
                Ok(Value::Object(object))
            }
        }
    }

    /// Checks that only whitespace is left.
    pub(crate) fn end(&mut self) -> Result<(), Error> {
        self.skip_whitespace();
        match self.peek() {
            None => Ok(()),
            Some(_) => self.fail("trailing characters"),
        }
    }
}
