variable "name" {
  description = "Name of the deployment (the pagefleet module's `name`)."
  type        = string
  default     = "pagefleet"
}

variable "region" {
  description = "AWS region of the VPC and the pipeline."
  type        = string
  default     = "eu-west-1"
}

variable "vpc_id" {
  description = "The existing VPC of the runner instances."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets of vpc_id for the runners, one per Availability Zone: a route to a NAT gateway (the vLLM sidecar downloads its model from Hugging Face) and an S3 gateway endpoint on their route tables."
  type        = list(string)
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
