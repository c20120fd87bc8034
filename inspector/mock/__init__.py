"""Mock servers: a recorded server answering again, from a session (`book.Book`: what it answers;
`server.MockServer`: how; `stdio.py` and `http.py`: the transports a client reaches it by)."""
