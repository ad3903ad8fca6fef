#!/usr/bin/env python3
"""translate.py: template.yaml as CloudFormation would deploy it, by the real SAM translator.

    python3 infra/sam/translate.py template.yaml > translated.json

It reads the template with CloudFormation's short-form tags (!Ref, !GetAtt, !Sub, ...) in their
long forms, replaces every function's local CodeUri with an S3 location (as `sam package` does:
the translator refuses a local folder), and runs samtranslator's transform with no network: the
managed policy loader is a static map, since the template names managed policies by ARN only.
The CloudFormation document goes to stdout as JSON; a refused template exits 1 with the
translator's reasons on stderr. Needs aws-sam-translator (pip install aws-sam-translator==1.110.0).
"""
import json
import os
import sys

try:
    import yaml
    from samtranslator.model.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform
except ImportError as e:  # said by the Go test too: what to install
    sys.stderr.write(f"translate: {e}: pip install aws-sam-translator==1.110.0 cfn-lint==1.51.0 awscli\n")
    sys.exit(2)

# The S3 location every local CodeUri becomes; a deploy's own is chosen by `sam deploy`.
CODE_BUCKET, CODE_KEY = "onceflow-artifacts", "onceflow/code.zip"


class Loader(yaml.SafeLoader):
    """A YAML loader that turns CloudFormation's short-form tags into their long forms."""


def _intrinsic(loader, suffix, node):
    name = "Ref" if suffix == "Ref" else ("Condition" if suffix == "Condition" else "Fn::" + suffix)
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt":  # !GetAtt Res.Attr is [Res, Attr]
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


Loader.add_multi_constructor("!", _intrinsic)
# Timestamps stay strings (AWSTemplateFormatVersion: 2010-09-09 must not become a date).
Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in Loader.yaml_implicit_resolvers.items()
}


class StaticPolicies:
    """The managed policy loader: no IAM call; the template names managed policies by ARN."""

    def load(self):
        return {}


def package(template):
    """Replaces local CodeUris (functions and Globals) with the S3 location, as sam package."""
    def fix(props):
        uri = props.get("CodeUri")
        if isinstance(uri, str) and not uri.startswith("s3://"):
            props["CodeUri"] = f"s3://{CODE_BUCKET}/{CODE_KEY}"
    fix(template.get("Globals", {}).get("Function", {}))
    for res in template.get("Resources", {}).values():
        if res.get("Type") == "AWS::Serverless::Function":
            fix(res.setdefault("Properties", {}))
    return template


def main(argv):
    path = argv[1] if len(argv) > 1 else "template.yaml"
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    with open(path, encoding="utf-8") as f:
        template = yaml.load(f, Loader=Loader)
    try:
        out = transform(package(template), {}, StaticPolicies())
    except InvalidDocumentException as e:
        reasons = "; ".join(getattr(c, "message", str(c)) for c in e.causes)
        sys.stderr.write(f"translate: the SAM translator refuses {path}: {reasons}\n")
        return 1
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
