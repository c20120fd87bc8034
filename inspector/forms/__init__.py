"""Forms generated from JSON Schema.

The pure half (`validation`) imports no Qt, so the headless command line can use
it; widget modules are imported only when asked for.
"""
