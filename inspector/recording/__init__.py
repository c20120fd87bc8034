"""Sessions kept after the fact (no Qt): opening a saved session (SQLite or a portable `.mcpsession`),
what its servers were (reconstructed from the frames), sharing it (`.mcpsession`, HAR, OTLP), replaying
its requests against a new build of a server, and comparing two servers or sessions."""
