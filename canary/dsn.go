package canary

import (
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Dialect is the SQL spoken by the database under test.
type Dialect uint8

const (
	// Postgres is PostgreSQL through github.com/jackc/pgx/v5 (its
	// database/sql driver, registered as "pgx").
	Postgres Dialect = iota
	// MySQL is MySQL or MariaDB through github.com/go-sql-driver/mysql.
	MySQL
)

func (d Dialect) String() string {
	if d == MySQL {
		return "mysql"
	}
	return "postgres"
}

// driver is d's database/sql driver name.
func (d Dialect) driver() string {
	if d == MySQL {
		return "mysql"
	}
	return "pgx"
}

// ParseDSN tells the dialect from the DSN's scheme and returns the DSN
// its driver takes:
//
//	postgres://user@host:5432/db?sslmode=disable   (also postgresql://; given to pgx as is)
//	mysql://user:pw@tcp(host:3306)/db              (also mariadb://; the rest is a go-sql-driver DSN)
//
// A MySQL DSN gets clientFoundRows (an UPDATE then counts the rows it
// matched, so a lost update that writes the value a row already holds
// still counts as one row) and parseTime is left alone.
func ParseDSN(dsn string) (Dialect, string, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return Postgres, dsn, nil
	case strings.HasPrefix(dsn, "mysql://"), strings.HasPrefix(dsn, "mariadb://"):
		rest := dsn[strings.Index(dsn, "://")+3:]
		cfg, err := mysql.ParseDSN(rest)
		if err != nil {
			return 0, "", fmt.Errorf("--dsn: %w", err)
		}
		cfg.ClientFoundRows = true
		return MySQL, cfg.FormatDSN(), nil
	}
	return 0, "", fmt.Errorf("--dsn %q: want postgres://... or mysql://user@tcp(host:port)/db", redact(dsn))
}

// redact drops the user information (which may hold a password) from a
// DSN for messages.
func redact(dsn string) string {
	if i := strings.LastIndex(dsn, "@"); i >= 0 {
		scheme := ""
		if j := strings.Index(dsn, "://"); j >= 0 && j < i {
			scheme = dsn[:j+3]
		}
		return scheme + "…" + dsn[i:]
	}
	return dsn
}

// isolationNames are the names --isolation accepts, in the order the
// usage text lists them.
var isolationNames = []struct {
	name  string
	level sql.IsolationLevel
}{
	{"default", sql.LevelDefault},
	{"read-uncommitted", sql.LevelReadUncommitted},
	{"read-committed", sql.LevelReadCommitted},
	{"repeatable-read", sql.LevelRepeatableRead},
	{"serializable", sql.LevelSerializable},
}

// ParseIsolation reads an isolation level to request from the database:
// default (the server's), read-uncommitted, read-committed,
// repeatable-read or serializable (also with spaces or underscores, any
// case: "READ COMMITTED").
func ParseIsolation(s string) (sql.IsolationLevel, error) {
	norm := strings.ToLower(strings.NewReplacer(" ", "-", "_", "-").Replace(strings.TrimSpace(s)))
	for _, n := range isolationNames {
		if n.name == norm {
			return n.level, nil
		}
	}
	names := make([]string, len(isolationNames))
	for i, n := range isolationNames {
		names[i] = n.name
	}
	return 0, fmt.Errorf("unknown isolation %q (want one of %s)", s, strings.Join(names, ", "))
}

// IsolationName is the name ParseIsolation reads for l.
func IsolationName(l sql.IsolationLevel) string {
	for _, n := range isolationNames {
		if n.level == l {
			return n.name
		}
	}
	return l.String()
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,47}$`)

// checkIdent accepts the names the canary puts into SQL unquoted.
func checkIdent(field, s string) error {
	if !identRE.MatchString(s) {
		return fmt.Errorf("%s %q: want letters, digits and underscores, not starting with a digit, at most 48", field, s)
	}
	return nil
}
