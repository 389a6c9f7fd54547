variable "name" {
  description = "Name of the deployment (the pagefleet module's `name`) and of the VPC."
  type        = string
  default     = "pagefleet-example"
}

variable "region" {
  description = "AWS region of the VPC and the pipeline."
  type        = string
  default     = "eu-west-1"
}

variable "vpc_cidr" {
  description = "CIDR block of the VPC: a /16 leaves room for two /24 public and two /20 private subnets."
  type        = string
  default     = "10.42.0.0/16"
}

variable "azs" {
  description = "Availability Zones of region to spread the subnets over, by name: each one more place to find Spot GPU capacity. By name, not the first few the account sees, so a zone AWS adds moves no subnet (at most 15, the /20s a /16 holds besides the first)."
  type        = list(string)
  default     = ["eu-west-1a", "eu-west-1b"]

  validation {
    condition     = length(var.azs) >= 1 && length(var.azs) <= 15 && alltrue([for az in var.azs : startswith(az, var.region)])
    error_message = "azs must name 1 to 15 Availability Zones of region, e.g. [\"${var.region}a\", \"${var.region}b\"]."
  }
}

variable "runner_kind" {
  description = "The pagefleet module's `runner_kind`: \"gpu\" (marker on GPU instances), or \"cpu\" (the text-layer converter on Fargate) for an account whose GPU quota request is still open."
  type        = string
  default     = "gpu"
}

variable "runner_image_tag" {
  description = "Tag of the runner image `make runner-image` pushed (the pagefleet module's `runner_image_tag`)."
  type        = string
  default     = null
}

variable "lambda_package_path" {
  description = "The Lambda zip from `make lambda-package`; null means the repository's build/lambda.zip."
  type        = string
  default     = null
}
