"""WeCom (WeChat Work) group robot: markdown messages under 4096 bytes."""
