"""Collections (no Qt): saved calls with expectations kept in a YAML file, run by `spyglass test` and the
window's Collections tab. `load` reads and checks a file (every problem with its line and column),
`expect` judges an answer, `run` runs the steps over one connection, `report` writes JUnit XML,
`starter` writes a first collection for a server (`spyglass test --init`)."""
