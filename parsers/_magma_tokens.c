/* The MAGMA reader's hot loops in C, each run without the interpreter lock (a few calls per
 * batch of files, so the reader's threads hand the lock over seldom):
 *
 * split_rows: the data-row tokeniser, the same tokens and values as magma_rows.split_rows_numpy.
 * It only answers where its answer is provably numpy's:
 *   - tokens are runs of bytes between blanks, newlines and parentheses (SEPARATORS);
 *   - `---` is NaN, `ok` and `failed` are the status codes;
 *   - a decimal number ([+-] digits [. digits] [e [+-] digits], the forms Arrow's cast takes)
 *     whose significant digits fit in 53 bits and whose power of ten is within 22 is read
 *     with one exact multiplication or division of doubles (Clinger's fast path): that is
 *     the correctly rounded value, which is what Arrow's cast gives too.
 * Anything else (a word, a tab, `nan`, a 20-digit mantissa, a row that does not start on a
 * token, a row that does not end with a separator) makes it return -2, and the caller reads the
 * batch with numpy, which decides such rows. Rows are read where they lie in the batch buffer.
 *
 * gather: the tokens of rows with the same number of them as a column-major matrix
 * (magma_rows.numeric_rows).
 *
 * count_lines / scan_lines: magma_scan._scan_lines_numpy's tables (data rows, other lines,
 * usage lines, column headers, per-file banner and device counts) in one pass over the lines
 * (the numpy function is the specification; tests compare the tables).
 *
 * This is an optional build (pyproject.toml): without a compiler numpy does all of it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define OK_CODE (-7777777.0)
#define FAILED_CODE (-8888888.0)

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static const unsigned char SEPARATOR[256] = {[' '] = 1, ['\n'] = 1, ['('] = 1, [')'] = 1};

static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* The number at `s` (a token's first byte), read in the same pass that finds where the token
   ends: where it ends when the whole token is a number the fast path reads exactly, with its
   value in `out`; else NULL (a word, or a number for the numpy path). A separator must follow
   the token before the row's end (split checks that each row ends with one), so the loops need
   no bounds. */
static inline const unsigned char *read_number(const unsigned char *s, double *out) {
    const unsigned char *p = s;
    int negative = 0, digits = 0, exponent = 0, seen;
    uint64_t mantissa = 0;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    const unsigned char *integer = p;
    while (*p == '0') p++; /* leading zeros are no significant digits */
    for (; is_digit(*p); p++) {
        if (++digits > 19) return NULL; /* more than fits exactly: let the numpy path read it */
        mantissa = mantissa * 10 + (uint64_t)(*p - '0');
    }
    seen = p > integer;
    if (*p == '.') {
        const unsigned char *fraction = ++p;
        if (!mantissa)
            while (*p == '0') p++; /* 0.000123: zeros before the first significant digit */
        for (; is_digit(*p); p++) {
            if (++digits > 19) return NULL;
            mantissa = mantissa * 10 + (uint64_t)(*p - '0');
        }
        exponent -= (int)(p - fraction);
        seen |= p > fraction;
    }
    if (!seen) return NULL;
    if (*p == 'e' || *p == 'E') {
        int negative_exponent = 0, value = 0;
        if (*++p == '+' || *p == '-') negative_exponent = *p++ == '-';
        const unsigned char *exponent_digits = p;
        for (; is_digit(*p); p++) {
            if (value < 100000) value = value * 10 + (*p - '0');
        }
        if (p == exponent_digits) return NULL;
        exponent += negative_exponent ? -value : value;
    }
    if (!SEPARATOR[*p]) return NULL; /* more bytes in the token: not a number */
    if (mantissa == 0) { /* any zero: no rounding, only the sign */
        *out = negative ? -0.0 : 0.0;
        return p;
    }
    if (mantissa >= ((uint64_t)1 << 53) || exponent > 22 || exponent < -22) return NULL;
    double value = (double)mantissa;
    value = exponent >= 0 ? value * POW10[exponent] : value / POW10[-exponent];
    *out = negative ? -value : value;
    return p;
}

/* Tokens of rows; row i runs from first[i] to stop[i]. Returns the number of tokens, -1 when
   `capacity` is too small, -2 when the numpy path must decide. One pass: a token is read as a
   number while its end is found, and only a token that is not one (`---`, `ok`, `failed`, or
   something for numpy) is looked at again. */
static Py_ssize_t split(const unsigned char *text, Py_ssize_t size, const int64_t *first, const int64_t *stop, Py_ssize_t rows,
                        double *values, Py_ssize_t capacity, int64_t *start, int64_t *count) {
    Py_ssize_t k = 0;
    for (Py_ssize_t r = 0; r < rows; r++) {
        Py_ssize_t at = (Py_ssize_t)first[r], end = (Py_ssize_t)stop[r];
        /* A row must start on a token and end with a separator (rows are newline-terminated),
           so no token runs past its row's end. */
        if (at < 0 || at >= size || end > size || end <= at || SEPARATOR[text[at]] || !SEPARATOR[text[end - 1]]) return -2;
        start[r] = k;
        const unsigned char *p = text + at, *row_end = text + end;
        while (p < row_end) {
            if (SEPARATOR[*p]) {
                p++;
                continue;
            }
            if (k >= capacity) return -1;
            const unsigned char *after = read_number(p, values + k);
            if (after == NULL) { /* a word: the whole token decides */
                for (after = p; !SEPARATOR[*after]; after++) {}
                Py_ssize_t len = after - p;
                if (len == 3 && p[0] == '-' && p[1] == '-' && p[2] == '-') values[k] = NAN;
                else if (len == 2 && p[0] == 'o' && p[1] == 'k') values[k] = OK_CODE;
                else if (len == 6 && memcmp(p, "failed", 6) == 0) values[k] = FAILED_CODE;
                else return -2;
            }
            k++;
            p = after;
        }
        count[r] = k - start[r];
    }
    return k;
}

static PyObject *split_rows(PyObject *self, PyObject *args) {
    Py_buffer text, first, stop, values, start, count;
    if (!PyArg_ParseTuple(args, "y*y*y*w*w*w*", &text, &first, &stop, &values, &start, &count)) return NULL;
    Py_ssize_t rows = first.len / (Py_ssize_t)sizeof(int64_t), found = -3;
    if (first.itemsize == 8 && stop.itemsize == 8 && stop.len == first.len && start.len >= first.len && count.len >= first.len &&
        values.itemsize == 8) {
        Py_BEGIN_ALLOW_THREADS
        found = split((const unsigned char *)text.buf, text.len, (const int64_t *)first.buf, (const int64_t *)stop.buf, rows,
                      (double *)values.buf, values.len / (Py_ssize_t)sizeof(double), (int64_t *)start.buf, (int64_t *)count.buf);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&text);
    PyBuffer_Release(&first);
    PyBuffer_Release(&stop);
    PyBuffer_Release(&values);
    PyBuffer_Release(&start);
    PyBuffer_Release(&count);
    if (found == -3) {
        PyErr_SetString(PyExc_ValueError, "split_rows: first, stop, start and count must be int64 arrays of one length, values float64");
        return NULL;
    }
    return PyLong_FromSsize_t(found);
}


/* The matrix of some rows' first `width` tokens, one column after another:
   out[j * n + i] = values[start[rows[i]] + j] (magma_rows.numeric_rows, column-major). */
static PyObject *gather(PyObject *self, PyObject *args) {
    Py_buffer values, start, rows, out;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*y*y*nw*", &values, &start, &rows, &width, &out)) return NULL;
    Py_ssize_t n = rows.len / 8, n_values = values.len / 8, n_start = start.len / 8;
    int ok = values.itemsize == 8 && start.itemsize == 8 && rows.itemsize == 8 && width >= 0 && out.len >= n * width * 8;
    if (ok) {
        const double *v = values.buf;
        const int64_t *s = start.buf, *r = rows.buf;
        double *o = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; ok && i < n; i++) { /* every index checked: a bad one is an error, not a crash */
            int64_t row = r[i];
            if (row < 0 || row >= n_start || s[row] < 0 || s[row] + width > n_values) {
                ok = 0;
                break;
            }
            const double *from = v + s[row];
            for (Py_ssize_t j = 0; j < width; j++) o[j * n + i] = from[j];
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&start);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "gather: arrays of the wrong type or size, or a row out of range");
        return NULL;
    }
    Py_RETURN_NONE;
}


/* ---- Lines: magma_scan._line_index and magma_scan._classify in one pass ---- */

#define LEAD 16 /* magma_scan.LEAD: bytes looked at per line */

static inline int is_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\r'; } /* magma_scan._blank */

static inline int is_space(unsigned char c) { /* bytes.isspace: what bytes.lstrip strips */
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0b' || c == '\x0c';
}

/* How often `c` occurs in buf[0:size]: a plain loop over blocks, which the compiler turns into
   vector compares (memchr per occurrence costs a call per line). */
static Py_ssize_t count_byte(const unsigned char *buf, Py_ssize_t size, unsigned char c) {
    Py_ssize_t n = 0, i = 0;
    for (; i + 256 <= size; i += 256) {
        unsigned int block = 0; /* at most 256 per block: no overflow */
        for (int j = 0; j < 256; j++) block += buf[i + j] == c;
        n += block;
    }
    for (; i < size; i++) n += buf[i] == c;
    return n;
}

/* One line, as _classify sees it: the first non-blank column and byte among its first LEAD bytes
   (`padded` holds at least LEAD bytes after the text), and whether it starts with an integer
   followed by a blank, a newline or the window's end. */
static void classify(const unsigned char *padded, int64_t start, int64_t end, int64_t *first_col, uint8_t *first_byte,
                     uint8_t *candidate) {
    int64_t width = end - start;
    unsigned char c0 = width > 0 ? padded[start] : 0;
    *first_col = 0;
    *first_byte = c0;
    *candidate = 0;
    if (!(is_blank(c0) || is_digit(c0))) return;
    const unsigned char *lead = padded + start;
    int col = 0;
    while (col < LEAD && is_blank(lead[col])) col++;
    unsigned char byte = col < LEAD ? lead[col] : lead[0];
    int any_nonblank = col < LEAD && !is_blank(byte) && byte != '\n';
    if (!any_nonblank) {
        if (width > LEAD) { /* more than LEAD blanks: decided on the text, as bytes.lstrip does */
            int64_t i = start;
            while (i < end && is_space(padded[i])) i++;
            *first_col = i - start;
            *first_byte = i < end ? padded[i] : 0;
        } else {
            *first_col = LEAD;
            *first_byte = 0;
        }
        return;
    }
    /* Where the leading integer stops: the first digit followed by a non-digit, or LEAD. */
    int stop = LEAD;
    for (int j = 0; j < LEAD - 1; j++) {
        if (is_digit(lead[j]) && !is_digit(lead[j + 1])) {
            stop = j + 1;
            break;
        }
    }
    unsigned char stop_byte = lead[stop < LEAD - 1 ? stop : LEAD - 1];
    int ends_ok = is_blank(stop_byte) || stop_byte == '\n' || stop == LEAD || stop >= width;
    *first_col = col;
    *first_byte = byte;
    *candidate = is_digit(byte) && ends_ok;
}

#define WINDOW 192 /* magma_scan.WINDOW: equal lines longer than this are parsed again, as numpy does */

static int starts_with(const unsigned char *at, const char *prefix) { return memcmp(at, prefix, strlen(prefix)) == 0; }

/* Whether the line names `Gflop/s` (a column header does). */
static int names_gflops(const unsigned char *line, Py_ssize_t width) {
    const unsigned char *at = line, *end = line + width;
    while (end - at >= 7 && (at = memchr(at, 'G', (size_t)(end - at - 6))) != NULL) {
        if (memcmp(at, "Gflop/s", 7) == 0) return 1;
        at++;
    }
    return 0;
}

/* Lines of one kind (usage, header), in a (5, capacity) table: line, start, end, file, run. */
typedef struct {
    int64_t *col;
    Py_ssize_t capacity, count;
} Runs;

static void add_run(Runs *t, const unsigned char *padded, int64_t line, int64_t start, int64_t end, int64_t file) {
    int64_t *c = t->col, cap = t->capacity, i = t->count++;
    int64_t run = i;
    if (i > 0) { /* equal to the line before it (magma_scan._distinct): the same run */
        int64_t prev_start = c[cap + i - 1], prev_end = c[2 * cap + i - 1];
        if (end - start == prev_end - prev_start && end - start <= WINDOW &&
            memcmp(padded + start, padded + prev_start, (size_t)(end - start)) == 0)
            run = c[4 * cap + i - 1];
    }
    c[i] = line;
    c[cap + i] = start;
    c[2 * cap + i] = end;
    c[3 * cap + i] = file;
    c[4 * cap + i] = run;
}

/* magma_scan._scan_lines_numpy in one pass over the lines (see there for the tables). */
static void scan(const unsigned char *padded, Py_ssize_t size, const int64_t *file_start, Py_ssize_t n_files, Py_ssize_t capacity,
                 int64_t *files, int64_t *rows, Py_ssize_t *n_rows, int64_t *other, Py_ssize_t *n_other, Runs *usage, Runs *header) {
    int64_t *first_line = files, *banners = files + n_files, *devices = files + 2 * n_files, *first_banner = files + 3 * n_files,
            *first_zero = files + 4 * n_files, *first_device = files + 5 * n_files;
    for (Py_ssize_t f = 0; f < n_files; f++) {
        banners[f] = devices[f] = 0;
        first_banner[f] = first_zero[f] = first_device[f] = -1;
    }
    Py_ssize_t line = 0, next_file = 0, r = 0, o = 0;
    int64_t start = 0;
    while (start < size) {
        if (line >= capacity) { /* more lines than the tables hold: the caller miscounted */
            *n_rows = *n_other = -1;
            return;
        }
        const unsigned char *nl = memchr(padded + start, '\n', (size_t)(size - start));
        int64_t end = nl ? nl - padded : size;
        /* The file of the line: the last one that starts at or before it; a file's first
           line is the first one at or after its start. */
        while (next_file < n_files && file_start[next_file] <= start) first_line[next_file++] = line;
        int64_t file = next_file - 1;
        int64_t first_col;
        uint8_t first_byte, candidate;
        classify(padded, start, end, &first_col, &first_byte, &candidate);
        if (candidate) {
            rows[r] = line;
            rows[capacity + r] = start;
            rows[2 * capacity + r] = start + first_col;
            rows[3 * capacity + r] = end + 1;
            rows[4 * capacity + r] = file;
            r++;
        } else if (first_byte == '%') {
            const unsigned char *at = padded + start + first_col; /* `padded` has WINDOW bytes after the text */
            if (starts_with(at, "% MAGMA ")) {
                if (file >= 0 && banners[file]++ == 0) first_banner[file] = at - padded;
            } else if (starts_with(at, "% device ")) {
                if (file >= 0) {
                    if (devices[file]++ == 0) first_device[file] = at - padded;
                    if (first_zero[file] < 0 && starts_with(at, "% device 0: ")) first_zero[file] = at - padded;
                }
            } else if (starts_with(at, "% Usage: ")) {
                add_run(usage, padded, line, at - padded, end, file);
            }
        } else if (first_byte != 0) {
            other[o] = line;
            other[capacity + o] = start;
            other[2 * capacity + o] = end;
            other[3 * capacity + o] = file;
            o++;
        }
        if (first_byte != 0 && !candidate) { /* a header: `%` first (after any whitespace), and `Gflop/s` */
            int is_pct = first_byte == '%';
            if (!is_pct) {
                int64_t i = start;
                while (i < end && is_space(padded[i])) i++;
                is_pct = i < end && padded[i] == '%';
            }
            if (is_pct && names_gflops(padded + start, end - start)) add_run(header, padded, line, start, end, file);
        }
        line++;
        start = end + 1;
    }
    while (next_file < n_files) first_line[next_file++] = line;
    *n_rows = r;
    *n_other = o;
}

static PyObject *count_lines(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t size, lines = 0;
    if (!PyArg_ParseTuple(args, "y*n", &buf, &size)) return NULL;
    if (size < 0 || size > buf.len) size = -1;
    else {
        const unsigned char *text = buf.buf;
        Py_BEGIN_ALLOW_THREADS
        lines = count_byte(text, size, '\n') + (size && text[size - 1] != '\n'); /* a last line without a newline */
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&buf);
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "count_lines: size out of the buffer");
        return NULL;
    }
    return PyLong_FromSsize_t(lines);
}

static PyObject *scan_lines(PyObject *self, PyObject *args) {
    Py_buffer buf, file_start, files, rows, other, usage, header;
    Py_ssize_t size, lines, n_rows = 0, n_other = 0;
    if (!PyArg_ParseTuple(args, "y*ny*nw*w*w*w*w*", &buf, &size, &file_start, &lines, &files, &rows, &other, &usage, &header))
        return NULL;
    Py_ssize_t n_files = file_start.len / 8;
    Runs usage_runs = {(int64_t *)usage.buf, lines, 0}, header_runs = {(int64_t *)header.buf, lines, 0};
    int ok = size >= 0 && size + WINDOW <= buf.len && lines >= 0 && file_start.itemsize == 8 && files.len >= 6 * n_files * 8 &&
             rows.len >= 5 * lines * 8 && other.len >= 4 * lines * 8 && usage.len >= 5 * lines * 8 && header.len >= 5 * lines * 8;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        scan((const unsigned char *)buf.buf, size, (const int64_t *)file_start.buf, n_files, lines, (int64_t *)files.buf,
             (int64_t *)rows.buf, &n_rows, (int64_t *)other.buf, &n_other, &usage_runs, &header_runs);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&buf);
    PyBuffer_Release(&file_start);
    PyBuffer_Release(&files);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&other);
    PyBuffer_Release(&usage);
    PyBuffer_Release(&header);
    if (!ok || n_rows < 0) {
        PyErr_SetString(PyExc_ValueError, "scan_lines: tables too small for the lines, or no padding after the text");
        return NULL;
    }
    return Py_BuildValue("nnnn", n_rows, n_other, usage_runs.count, header_runs.count);
}

static PyMethodDef methods[] = {
    {"split_rows", split_rows, METH_VARARGS,
     "split_rows(text, first, stop, values, start, count) -> tokens, -1 (values too short) or -2 (use the numpy path)"},
    {"gather", gather, METH_VARARGS, "gather(values, start, rows, width, out): the rows' first width tokens, column after column"},
    {"count_lines", count_lines, METH_VARARGS, "count_lines(buf, size) -> the number of lines in buf[:size]"},
    {"scan_lines", scan_lines, METH_VARARGS,
     "scan_lines(buf, size, file_start, lines, files, rows, other, usage, header) -> (rows, other, usage, header): "
     "magma_scan._scan_lines_numpy's tables"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_magma_tokens", NULL, -1, methods};

PyMODINIT_FUNC PyInit__magma_tokens(void) { return PyModule_Create(&module); }
