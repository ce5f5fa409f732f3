from tests.reference.fixtures import groupcoord_bootstrap, kafka_reference, kafka_reference_if_available

__all__ = ["groupcoord_bootstrap", "kafka_reference", "kafka_reference_if_available"]
