terraform {
  # The pagefleet module's own floor (../../versions.tf); it configures the aws provider itself
  # from `region`.
  required_version = ">= 1.11.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.100, < 6.0"
    }
  }
}
