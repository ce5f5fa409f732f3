"""The transaction coordinator (Kafka's transaction-coordinator module): transactional ids, their producer
ids and epochs, the state of their transactions in ``__transaction_state``, and the markers that end them."""
