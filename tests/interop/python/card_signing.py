"""Signs or verifies an agent card with the official A2A Python SDK (a2a.utils.signing).

    card_signing.py sign   CARD.json PRIVATE.pem KID   -> prints the signed card (JSON)
    card_signing.py verify CARD.json PUBLIC.pem  KID   -> prints "verified", or exits 1

ES256 only. The card is read with protobuf's ParseDict, as the SDK's clients read cards.
"""

import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.types import AgentCard
from a2a.utils.signing import (
    SignatureVerificationError,
    create_agent_card_signer,
    create_signature_verifier,
)


def main() -> int:
    mode, card_path, key_path, kid = sys.argv[1:5]
    with open(card_path, encoding="utf-8") as f:
        card = ParseDict(json.load(f), AgentCard())
    with open(key_path, encoding="utf-8") as f:
        key = f.read()
    if mode == "sign":
        signer = create_agent_card_signer(
            signing_key=key,
            protected_header={"alg": "ES256", "kid": kid, "typ": "JOSE"},
        )
        print(json.dumps(MessageToDict(signer(card))))
        return 0
    if mode == "verify":
        def key_provider(got_kid, _jku):
            # The key is pinned: a jku in the header is never followed.
            if got_kid != kid:
                raise SignatureVerificationError(f"unknown kid {got_kid!r}")
            return key

        verifier = create_signature_verifier(key_provider, ["ES256"])
        try:
            verifier(card)
        except SignatureVerificationError as e:
            print(f"refused: {e!r}")
            return 1
        print("verified")
        return 0
    print(f"unknown mode {mode!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
